import com.sun.jdi.Bootstrap;
import com.sun.jdi.ClassType;
import com.sun.jdi.Field;
import com.sun.jdi.Location;
import com.sun.jdi.ReferenceType;
import com.sun.jdi.StackFrame;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.AttachingConnector;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.event.BreakpointEvent;
import com.sun.jdi.event.ClassPrepareEvent;
import com.sun.jdi.event.Event;
import com.sun.jdi.event.EventQueue;
import com.sun.jdi.event.EventSet;
import com.sun.jdi.event.StepEvent;
import com.sun.jdi.event.VMDeathEvent;
import com.sun.jdi.event.VMDisconnectEvent;
import com.sun.jdi.event.VMStartEvent;
import com.sun.jdi.request.BreakpointRequest;
import com.sun.jdi.request.ClassPrepareRequest;
import com.sun.jdi.request.EventRequestManager;
import com.sun.jdi.request.StepRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The JDK JDI side of the benchmark (see bench/src/side.rs, which does the same with jdi-rs):
 * java JdiBench ADDRESS HITS STEPS ROUND_TRIPS CONCURRENCY REPS HOT STEP_START IDLE DEEP_BOTTOM [list].
 * Attaches to tests/fixtures/Bench.java and prints one "RESULT key=value ..." line. With "list", it
 * lists every loaded class at the first breakpoint hit (VirtualMachine.allClasses(), as jdb's
 * "classes" does), so that the agent holds an ID for each while the phases run.
 */
public class JdiBench {
    static final long T = 60_000;

    public static void main(String[] a) throws Exception {
        String address = a[0];
        int hits = Integer.parseInt(a[1]);
        int steps = Integer.parseInt(a[2]);
        int roundTrips = Integer.parseInt(a[3]);
        int concurrency = Integer.parseInt(a[4]);
        int reps = Integer.parseInt(a[5]);
        int hotLine = Integer.parseInt(a[6]);
        int stepLine = Integer.parseInt(a[7]);
        int idleLine = Integer.parseInt(a[8]);
        int deepLine = Integer.parseInt(a[9]);
        boolean listClasses = a.length > 10 && a[10].equals("list");

        AttachingConnector connector = Bootstrap.virtualMachineManager().attachingConnectors().stream()
                .filter(c -> c.name().equals("com.sun.jdi.SocketAttach")).findFirst().orElseThrow();
        Map<String, Connector.Argument> args = connector.defaultArguments();
        int colon = address.lastIndexOf(':');
        args.get("hostname").setValue(address.substring(0, colon));
        args.get("port").setValue(address.substring(colon + 1));
        args.get("timeout").setValue(Long.toString(T));
        VirtualMachine vm = connector.attach(args);
        EventQueue queue = vm.eventQueue();
        EventRequestManager erm = vm.eventRequestManager();

        EventSet set = expect(queue, VMStartEvent.class);
        ClassPrepareRequest prepare = erm.createClassPrepareRequest();
        prepare.addClassFilter("Bench");
        prepare.enable();
        set.resume();
        set = expect(queue, ClassPrepareEvent.class);
        erm.deleteEventRequest(prepare);
        ReferenceType bench = ((ClassPrepareEvent) set.iterator().next()).referenceType();
        int listed = 0;

        // 1. Breakpoint hits, each resumed.
        BreakpointRequest bp = erm.createBreakpointRequest(bench.locationsOfLine(hotLine).get(0));
        bp.enable();
        set.resume();
        int warm = hits / 10;
        long start = System.nanoTime();
        for (int i = 0; i < hits; i++) {
            set = expect(queue, BreakpointEvent.class);
            if (i == 0 && listClasses) {
                listed = vm.allClasses().size(); // once main has loaded its classes
            }
            if (i == warm) {
                start = System.nanoTime();
            }
            if (i + 1 < hits) {
                set.resume();
            }
        }
        double bpPerS = (hits - 1 - warm) * 1e9 / (System.nanoTime() - start);
        erm.deleteEventRequest(bp);

        // 2. Single steps (line, over) from the first line of stepLoop, as debuggers step: one
        // one-shot step request (count filter 1) per step, deleted after it fired.
        set = runTo(erm, queue, set, bench.locationsOfLine(stepLine).get(0));
        ThreadReference main = ((BreakpointEvent) set.iterator().next()).thread();
        warm = steps / 10;
        start = System.nanoTime();
        for (int i = 0; i < steps; i++) {
            StepRequest step = erm.createStepRequest(main, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
            step.addCountFilter(1);
            step.enable();
            set.resume();
            set = expect(queue, StepEvent.class);
            erm.deleteEventRequest(step);
            if (i == warm) {
                start = System.nanoTime();
            }
        }
        double stepsPerS = (steps - 1 - warm) * 1e9 / (System.nanoTime() - start);

        // 3. Round trips while the VM runs (main sleeps in idle(); JDI caches nothing then).
        set = runTo(erm, queue, set, bench.locationsOfLine(idleLine).get(0));
        set.resume();
        for (int i = 0; i < roundTrips / 10; i++) {
            main.name();
        }
        start = System.nanoTime();
        for (int i = 0; i < roundTrips; i++) {
            main.name();
        }
        double rtPerS = roundTrips * 1e9 / (System.nanoTime() - start);
        int perCaller = roundTrips / concurrency;
        List<Thread> callers = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        start = System.nanoTime();
        for (int c = 0; c < concurrency; c++) {
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; i < perCaller; i++) {
                        main.name();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            t.start();
            callers.add(t);
        }
        for (Thread t : callers) {
            t.join();
        }
        double rtConcPerS = (double) perCaller * concurrency * 1e9 / (System.nanoTime() - start);
        if (!failures.isEmpty()) {
            throw new RuntimeException(failures.get(0));
        }

        // 4. All frames of a deep stack, with each frame's method and line.
        BreakpointRequest deep = erm.createBreakpointRequest(bench.locationsOfLine(deepLine).get(0));
        deep.enable();
        Field released = bench.fieldByName("released");
        ((ClassType) bench).setValue(released, vm.mirrorOf(true));
        double[] times = new double[reps];
        int frameCount = 0;
        long described = 0;
        for (int r = 0; r < reps; r++) {
            set = expect(queue, BreakpointEvent.class);
            ThreadReference thread = ((BreakpointEvent) set.iterator().next()).thread();
            long t0 = System.nanoTime();
            List<StackFrame> frames = thread.frames();
            for (StackFrame frame : frames) {
                Location loc = frame.location();
                described += loc.method().name().length() + (loc.lineNumber() > 0 ? 1 : 0);
            }
            times[r] = (System.nanoTime() - t0) / 1e6;
            frameCount = frames.size();
            if (r == reps - 1) {
                // Before the last resume: after it the program may end before a Clear is answered.
                erm.deleteEventRequest(deep);
            }
            set.resume();
        }
        double firstMs = times[0];
        java.util.Arrays.sort(times);
        double framesMs = times[times.length / 2];

        // The program ends by itself now.
        outer:
        while (true) {
            EventSet s = next(queue);
            for (Event e : s) {
                if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) {
                    break outer;
                }
            }
            s.resume();
        }
        long rss = peakRssKb();
        System.out.printf(java.util.Locale.ROOT,
                "RESULT bp_per_s=%.1f steps_per_s=%.1f rt_per_s=%.1f rt_conc_per_s=%.1f frames=%d frames_ms=%.3f"
                        + " frames_first_ms=%.3f rss_kb=%d described=%d classes=%d%n",
                bpPerS, stepsPerS, rtPerS, rtConcPerS, frameCount, framesMs, firstMs, rss, described, listed);
        System.exit(0);
    }

    /**
     * The next event set, waited for the way jdb waits (EventQueue.remove() without a timeout).
     * JDI's timed remove starts a thread for every call that finds the queue empty (its timer),
     * which costs the client more than an agent's whole share of a breakpoint hit and hid the
     * agents' difference. A run that hangs is ended by the runner's timeout.
     */
    static EventSet next(EventQueue queue) throws InterruptedException {
        return queue.remove();
    }

    static EventSet expect(EventQueue queue, Class<? extends Event> kind) throws InterruptedException {
        EventSet set = next(queue);
        for (Event e : set) {
            if (kind.isInstance(e)) {
                return set;
            }
        }
        throw new IllegalStateException("expected " + kind.getSimpleName() + ", got " + set);
    }

    /** Breaks at `location`, resumes `set`, and returns the hit (the request is deleted again). */
    static EventSet runTo(EventRequestManager erm, EventQueue queue, EventSet set, Location location)
            throws InterruptedException {
        BreakpointRequest bp = erm.createBreakpointRequest(location);
        bp.enable();
        set.resume();
        EventSet hit = expect(queue, BreakpointEvent.class);
        erm.deleteEventRequest(bp);
        return hit;
    }

    static long peakRssKb() throws java.io.IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.split("\\s+")[1]);
            }
        }
        return -1;
    }
}
