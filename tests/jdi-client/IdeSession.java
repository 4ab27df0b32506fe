import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.lang.reflect.Method;
import java.util.*;

/**
 * IdeSession: what an IDE's debugger (IntelliJ's and Eclipse's both sit on JDI) does with a
 * program whose work runs in virtual threads, through the JDK's own JDI, printing one line per
 * observation so that two runs (JDK 25's agent, ours) can be compared line by line.
 *
 * Attaches to {@code host:port} (the VirtualWork fixture, suspended at its start), asks for
 * platform-only thread starts as IDEs do by default, stops at the two given lines of VirtualWork
 * (one in a named virtual thread, one in an unnamed one), and at each: the thread (virtual?,
 * status, group, suspend count), the stack, the locals, a method invoked in the thread, a step
 * over and a step out, a suspend and resume of the thread alone. Ends when the program ends.
 *
 * JDI's virtual thread API (JDK 21) is called through reflection so that this compiles with
 * {@code --release 17} like the fixtures; it runs on the test JDK (21+).
 *
 * Usage: IdeSession host:port parkedLine workLine
 */
public class IdeSession {
    static VirtualMachine vm;

    static void say(String line) {
        System.out.println(line);
    }

    static boolean isVirtual(ThreadReference t) {
        try {
            return (Boolean) ThreadReference.class.getMethod("isVirtual").invoke(t);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException) {
                throw (RuntimeException) e.getCause();
            }
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("JDI without isVirtual: " + e);
        }
    }

    static void platformThreadsOnly(ThreadStartRequest r) {
        try {
            Method m = ThreadStartRequest.class.getMethod("addPlatformThreadsOnlyFilter");
            m.invoke(r);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("JDI without addPlatformThreadsOnlyFilter: " + e);
        }
    }

    /** class.method:line, a hidden class's name without its address (it differs between runs). */
    static String where(Location l) {
        String type = l.declaringType().name().replaceAll("/0x[0-9a-f]+$", "");
        return type + "." + l.method().name() + ":" + l.lineNumber();
    }

    static String value(Value v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof StringReference) {
            return "\"" + ((StringReference) v).value() + "\"";
        }
        if (v instanceof ObjectReference) {
            return "instance of " + v.type().name();
        }
        return v.toString();
    }

    static String status(int s) {
        switch (s) {
            case ThreadReference.THREAD_STATUS_RUNNING: return "RUNNING";
            case ThreadReference.THREAD_STATUS_WAIT: return "WAIT";
            case ThreadReference.THREAD_STATUS_MONITOR: return "MONITOR";
            case ThreadReference.THREAD_STATUS_SLEEPING: return "SLEEPING";
            case ThreadReference.THREAD_STATUS_ZOMBIE: return "ZOMBIE";
            case ThreadReference.THREAD_STATUS_NOT_STARTED: return "NOT_STARTED";
            default: return "UNKNOWN(" + s + ")";
        }
    }

    /** The thread, as an IDE's thread view shows it. */
    static void describe(String what, ThreadReference t) {
        say(what + ": name=\"" + t.name() + "\" virtual=" + isVirtual(t) + " status=" + status(t.status())
                + " suspended=" + t.isSuspended() + " atBreakpoint=" + t.isAtBreakpoint()
                + " suspendCount=" + t.suspendCount()
                + " group=" + (t.threadGroup() == null ? "null" : t.threadGroup().name())
                + " inAllThreads=" + vm.allThreads().contains(t));
    }

    /** The frames down to (and including) the first one outside VirtualWork, and the top's locals. */
    static void stack(ThreadReference t) throws Exception {
        List<StackFrame> frames = t.frames();
        say("  frames: " + frames.size() + " (frameCount " + t.frameCount() + ")");
        for (StackFrame f : frames) {
            say("  at " + where(f.location()));
            if (!f.location().declaringType().name().startsWith("VirtualWork")) {
                break;
            }
        }
        StackFrame top = t.frame(0);
        List<LocalVariable> locals = top.visibleVariables();
        Map<LocalVariable, Value> values = top.getValues(locals);
        for (LocalVariable v : locals) {
            say("  local " + v.name() + " = " + value(values.get(v)));
        }
        say("  this = " + value(top.thisObject()));
    }

    /** Invokes Thread.getName() and Thread.isVirtual() on the thread, in the thread. */
    static void invoke(ThreadReference t) throws Exception {
        ClassType thread = (ClassType) vm.classesByName("java.lang.Thread").get(0);
        Method0 getName = new Method0(thread, "getName");
        say("  invoke getName() = " + value(t.invokeMethod(t, getName.m, List.of(), 0)));
        Method0 isVirtual = new Method0(thread, "isVirtual");
        say("  invoke isVirtual() = " + value(t.invokeMethod(t, isVirtual.m, List.of(), 0)));
        say("  after invoke: suspended=" + t.isSuspended() + " frames=" + t.frameCount());
    }

    static final class Method0 {
        final com.sun.jdi.Method m;

        Method0(ClassType type, String name) {
            m = type.methodsByName(name, "()" + (name.equals("isVirtual") ? "Z" : "Ljava/lang/String;")).get(0);
        }
    }

    /** A step of the given depth in `t`, waited for; prints where it ended. */
    static void step(ThreadReference t, int depth, String what) throws Exception {
        EventRequestManager erm = vm.eventRequestManager();
        StepRequest r = erm.createStepRequest(t, StepRequest.STEP_LINE, depth);
        r.addCountFilter(1);
        r.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
        r.enable();
        vm.resume();
        while (true) {
            EventSet set = vm.eventQueue().remove(60_000);
            if (set == null) {
                throw new IllegalStateException("no step event in 60 s");
            }
            for (Event e : set) {
                if (e instanceof StepEvent) {
                    StepEvent s = (StepEvent) e;
                    say("  " + what + " ended at " + where(s.location()) + " in \"" + s.thread().name()
                            + "\" same thread=" + s.thread().equals(t) + " virtual=" + isVirtual(s.thread()));
                    erm.deleteEventRequest(r);
                    return;
                }
                if (e instanceof ThreadStartEvent) {
                    noteStart((ThreadStartEvent) e);
                    continue;
                }
                throw new IllegalStateException("unexpected event while stepping: " + e);
            }
            set.resume();
        }
    }

    static int virtualStarts;

    static void noteStart(ThreadStartEvent e) {
        try {
            if (isVirtual(e.thread())) {
                virtualStarts++;
            }
        } catch (VMDisconnectedException | ObjectCollectedException gone) {
            // A thread started as the program ended (suspend policy none): the VM may be gone.
        }
    }

    public static void main(String[] args) throws Exception {
        String[] hostPort = args[0].split(":");
        int parkedLine = Integer.parseInt(args[1]);
        int workLine = Integer.parseInt(args[2]);
        AttachingConnector socket = null;
        for (AttachingConnector c : Bootstrap.virtualMachineManager().attachingConnectors()) {
            if (c.name().equals("com.sun.jdi.SocketAttach")) {
                socket = c;
            }
        }
        Map<String, Connector.Argument> a = socket.defaultArguments();
        a.get("hostname").setValue(hostPort[0]);
        a.get("port").setValue(hostPort[1]);
        vm = socket.attach(a);
        say("vm: version=" + vm.version() + " canGetInstanceInfo=" + vm.canGetInstanceInfo());

        EventRequestManager erm = vm.eventRequestManager();
        ThreadStartRequest starts = erm.createThreadStartRequest();
        platformThreadsOnly(starts);
        starts.setSuspendPolicy(EventRequest.SUSPEND_NONE);
        starts.enable();
        ClassPrepareRequest prepare = erm.createClassPrepareRequest();
        prepare.addClassFilter("VirtualWork");
        prepare.enable();

        boolean done = false;
        while (!done) {
            EventSet set = vm.eventQueue().remove(60_000);
            if (set == null) {
                throw new IllegalStateException("no event in 60 s");
            }
            boolean resume = true;
            for (Event e : set) {
                if (e instanceof VMStartEvent) {
                    describe("start", ((VMStartEvent) e).thread());
                } else if (e instanceof ClassPrepareEvent) {
                    ReferenceType type = ((ClassPrepareEvent) e).referenceType();
                    for (int line : new int[] {parkedLine, workLine}) {
                        BreakpointRequest bp = erm.createBreakpointRequest(type.locationsOfLine(line).get(0));
                        bp.setSuspendPolicy(EventRequest.SUSPEND_ALL);
                        bp.enable();
                    }
                    say("prepared " + type.name() + ", breakpoints at " + parkedLine + " and " + workLine);
                } else if (e instanceof ThreadStartEvent) {
                    noteStart((ThreadStartEvent) e);
                } else if (e instanceof BreakpointEvent) {
                    BreakpointEvent b = (BreakpointEvent) e;
                    ThreadReference t = b.thread();
                    say("breakpoint at " + where(b.location()));
                    describe("  thread", t);
                    stack(t);
                    invoke(t);
                    if (b.location().lineNumber() == workLine) {
                        step(t, StepRequest.STEP_OVER, "step over");
                        stack(t);
                        step(t, StepRequest.STEP_OUT, "step out");
                        say("  after step out: frame 0 at " + where(t.frame(0).location()));
                    }
                    // The thread alone: one more suspend, then back.
                    t.suspend();
                    say("  suspended again: suspendCount=" + t.suspendCount());
                    t.resume();
                    say("  resumed once: suspendCount=" + t.suspendCount() + " suspended=" + t.isSuspended());
                } else if (e instanceof VMDeathEvent) {
                    say("vm death");
                } else if (e instanceof VMDisconnectEvent) {
                    done = true;
                    resume = false;
                }
            }
            if (resume && !done) {
                set.resume();
            }
        }
        say("virtual thread starts reported with platformThreadsOnly: " + virtualStarts);
        say("end");
    }
}
