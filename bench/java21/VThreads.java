/**
 * VThreads: the debuggee of `bench vthreads` (bench/src/vthreads.rs, BENCHMARKS.md). Needs JDK 21
 * or later (compiled with --release 21, apart from the JDK 17 fixtures). Lines carry "// @marker"
 * comments that the bench finds.
 *
 * java VThreads spawn THREADS WARM WORK
 *   Starts and joins WARM virtual threads (not timed: the JIT warms up), then starts THREADS more,
 *   each doing WORK rounds of arithmetic (a few microseconds), and joins them all. Only this
 *   start-and-join phase is timed, inside the program (JVM start-up is not counted). Prints
 *   "VThreads spawn threads=THREADS warm=WARM ns=NANOS" and "VThreads done <checksum>".
 *   never() holds the line marked "never": no thread ever runs it (a debugger breaks there).
 *
 * java VThreads crowd THREADS HITS
 *   Starts and joins THREADS virtual threads (10 rounds of work each), collects garbage, then does
 *   what "events" does without the steps: one virtual thread "bench-vt" calls hot(i) HITS times.
 *   A debugger that saw every start has an ID for each of those threads, all of them dead now.
 *
 * java VThreads events HITS
 *   One virtual thread named "bench-vt" calls hot(i) HITS times (the line marked "vt-hot" is the
 *   one to break on), then stepLoop(), whose first line is marked "vt-step-start" (a debugger
 *   steps over lines from there; the loop is far longer than any step count). The platform main
 *   thread joins it, then prints "VThreads done <checksum>".
 */
public class VThreads {
    static long[] results;

    static void never() {
        results[0] = -1; // @never
    }

    static void work(int slot, int rounds) {
        long x = slot + 0x9E3779B97F4A7C15L;
        for (int k = 0; k < rounds; k++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        results[slot] = x;
    }

    /** Starts `count` virtual threads (slots from `first`), then joins them all. */
    static void startAndJoin(int first, int count, int rounds) throws InterruptedException {
        Thread[] threads = new Thread[count];
        Thread.Builder builder = Thread.ofVirtual();
        for (int i = 0; i < count; i++) {
            int slot = first + i;
            threads[i] = builder.start(() -> work(slot, rounds));
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    static int hot(int i) {
        return i * 3 + 1; // @vt-hot
    }

    static long stepLoop() {
        long acc = 0; // @vt-step-start
        for (int i = 0; i < 100_000_000; i++) {
            acc += i;
            acc ^= (long) i << 1;
        }
        return acc;
    }

    static long checksum() {
        long sum = 0;
        for (long r : results) {
            sum += r;
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "spawn" -> {
                int threads = Integer.parseInt(args[1]);
                int warm = Integer.parseInt(args[2]);
                int rounds = Integer.parseInt(args[3]);
                results = new long[warm + threads];
                startAndJoin(0, warm, rounds);
                long start = System.nanoTime();
                startAndJoin(warm, threads, rounds);
                long ns = System.nanoTime() - start;
                System.out.println("VThreads spawn threads=" + threads + " warm=" + warm + " ns=" + ns);
                System.out.println("VThreads done " + checksum());
            }
            case "crowd" -> {
                int threads = Integer.parseInt(args[1]);
                int hits = Integer.parseInt(args[2]);
                results = new long[Math.max(threads, 1)];
                startAndJoin(0, threads, 10);
                System.gc();
                Thread vt = Thread.ofVirtual().name("bench-vt").start(() -> {
                    long sum = 0;
                    for (int i = 0; i < hits; i++) {
                        sum += hot(i);
                    }
                    results[0] = sum;
                });
                vt.join();
                System.out.println("VThreads done " + checksum());
            }
            case "events" -> {
                int hits = Integer.parseInt(args[1]);
                results = new long[2];
                Thread vt = Thread.ofVirtual().name("bench-vt").start(() -> {
                    long sum = 0;
                    for (int i = 0; i < hits; i++) {
                        sum += hot(i);
                    }
                    results[0] = sum;
                    results[1] = stepLoop();
                });
                vt.join();
                System.out.println("VThreads done " + checksum());
            }
            default -> throw new IllegalArgumentException("usage: VThreads spawn THREADS WARM WORK | crowd THREADS HITS | events HITS");
        }
    }
}
