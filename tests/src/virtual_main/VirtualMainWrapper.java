import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * Runs another class's {@code main} in a virtual thread named "main" and waits for it, so that a
 * fixture written for a platform main thread is debugged in a virtual one (JDBG_TEST_VIRTUAL_MAIN).
 * Usage: {@code VirtualMainWrapper MainClass args...}. Uses reflection for the JDK 21 API so that it
 * compiles with {@code --release 17} like the fixtures. An exception out of the wrapped main leaves
 * this main too, so the JVM exits as it would without the wrapper.
 */
public final class VirtualMainWrapper {
    public static void main(String[] args) throws Throwable {
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        Throwable[] failure = new Throwable[1];
        Runnable body = () -> {
            try {
                main.invoke(null, (Object) rest);
            } catch (InvocationTargetException e) {
                failure[0] = e.getCause();
            } catch (Throwable t) {
                failure[0] = t;
            }
        };
        Class<?> builderClass = Class.forName("java.lang.Thread$Builder");
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        builder = builderClass.getMethod("name", String.class).invoke(builder, "main");
        Thread thread = (Thread) builderClass.getMethod("start", Runnable.class).invoke(builder, body);
        thread.join();
        if (failure[0] != null) {
            throw failure[0];
        }
    }
}
