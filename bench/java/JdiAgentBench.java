import com.sun.jdi.Bootstrap;
import com.sun.jdi.Field;
import com.sun.jdi.Location;
import com.sun.jdi.LongValue;
import com.sun.jdi.ReferenceType;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VMDisconnectedException;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.AttachingConnector;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.event.BreakpointEvent;
import com.sun.jdi.event.ClassPrepareEvent;
import com.sun.jdi.event.Event;
import com.sun.jdi.event.EventQueue;
import com.sun.jdi.event.EventSet;
import com.sun.jdi.event.LocatableEvent;
import com.sun.jdi.event.MethodEntryEvent;
import com.sun.jdi.event.StepEvent;
import com.sun.jdi.event.VMDeathEvent;
import com.sun.jdi.event.VMDisconnectEvent;
import com.sun.jdi.event.VMStartEvent;
import com.sun.jdi.request.BreakpointRequest;
import com.sun.jdi.request.ClassPrepareRequest;
import com.sun.jdi.request.EventRequest;
import com.sun.jdi.request.EventRequestManager;
import com.sun.jdi.request.MethodEntryRequest;
import com.sun.jdi.request.StepRequest;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

/**
 * The agent benchmark's client (see bench/src/agent.rs): the JDK's own JDI, the same for the JDK's
 * agent and ours. Prints one "RESULT key=value ..." line. Two modes:
 *
 * <pre>
 * java JdiAgentBench phases ADDRESS ENTRY_CALLS STEP_EVENTS OVER_REPS THREADS THREAD_HITS
 *     ENTRY_START ENTRY_END STEPS_START OVER OVER_END THREADS_START SHARED
 * java JdiAgentBench work ADDRESS idle|entry TARGET_CLASS
 * </pre>
 *
 * "phases" drives tests/fixtures/AgentBench.java (filtered method entries, step throughput, step
 * over a CPU-bound call, many threads at one breakpoint); "work" attaches to
 * tests/fixtures/AgentWork.java, asks for nothing ("idle") or for the method entries of
 * TARGET_CLASS only ("entry", a ClassMatch filter), lets it run to its end and counts the entries.
 */
public class JdiAgentBench {
    static final long T = 60_000;

    public static void main(String[] a) throws Exception {
        switch (a[0]) {
            case "phases" -> phases(a);
            case "work" -> work(a);
            default -> throw new IllegalArgumentException("mode: phases or work, not " + a[0]);
        }
        System.exit(0);
    }

    static VirtualMachine attach(String address) throws Exception {
        AttachingConnector connector = Bootstrap.virtualMachineManager().attachingConnectors().stream()
                .filter(c -> c.name().equals("com.sun.jdi.SocketAttach")).findFirst().orElseThrow();
        Map<String, Connector.Argument> args = connector.defaultArguments();
        int colon = address.lastIndexOf(':');
        args.get("hostname").setValue(address.substring(0, colon));
        args.get("port").setValue(address.substring(colon + 1));
        args.get("timeout").setValue(Long.toString(T));
        return connector.attach(args);
    }

    static void work(String[] a) throws Exception {
        VirtualMachine vm = attach(a[1]);
        boolean entry = a[2].equals("entry");
        EventQueue queue = vm.eventQueue();
        EventSet set = expect(queue, VMStartEvent.class);
        if (entry) {
            MethodEntryRequest request = vm.eventRequestManager().createMethodEntryRequest();
            request.addClassFilter(a[3]);
            request.setSuspendPolicy(EventRequest.SUSPEND_ALL);
            request.enable();
        }
        set.resume();
        long entries = 0;
        outer:
        while (true) {
            EventSet s = next(queue);
            for (Event e : s) {
                if (e instanceof MethodEntryEvent m) {
                    if (!m.method().declaringType().name().equals(a[3])) {
                        throw new IllegalStateException("an entry outside " + a[3] + ": " + m.method());
                    }
                    entries++;
                } else if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) {
                    break outer;
                }
            }
            try {
                s.resume();
            } catch (VMDisconnectedException e) {
                break;
            }
        }
        System.out.printf(Locale.ROOT, "RESULT entries=%d%n", entries);
    }

    static void phases(String[] a) throws Exception {
        VirtualMachine vm = attach(a[1]);
        int entryCalls = Integer.parseInt(a[2]);
        int stepEvents = Integer.parseInt(a[3]);
        int overReps = Integer.parseInt(a[4]);
        int threads = Integer.parseInt(a[5]);
        int threadHits = Integer.parseInt(a[6]);
        int entryStart = Integer.parseInt(a[7]);
        int entryEnd = Integer.parseInt(a[8]);
        int stepsStart = Integer.parseInt(a[9]);
        int over = Integer.parseInt(a[10]);
        int overEnd = Integer.parseInt(a[11]);
        int threadsStart = Integer.parseInt(a[12]);
        int shared = Integer.parseInt(a[13]);

        EventQueue queue = vm.eventQueue();
        EventRequestManager erm = vm.eventRequestManager();
        EventSet set = expect(queue, VMStartEvent.class);
        ClassPrepareRequest prepare = erm.createClassPrepareRequest();
        prepare.addClassFilter("AgentBench");
        prepare.enable();
        set.resume();
        set = expect(queue, ClassPrepareEvent.class);
        erm.deleteEventRequest(prepare);
        ReferenceType bench = ((ClassPrepareEvent) set.iterator().next()).referenceType();

        // 1. Method entries of one class (ClassMatch) while the program calls methods of other
        // classes in between: suspend policy all, each event resumed.
        set = runTo(erm, queue, set, line(bench, entryStart));
        MethodEntryRequest entries = erm.createMethodEntryRequest();
        entries.addClassFilter("AgentBench$Target");
        entries.enable();
        set.resume();
        int warm = entryCalls / 10;
        long start = System.nanoTime();
        for (int i = 0; i < entryCalls; i++) {
            set = expect(queue, MethodEntryEvent.class);
            MethodEntryEvent e = (MethodEntryEvent) first(set, MethodEntryEvent.class);
            if (!e.method().name().equals("hit")) {
                throw new IllegalStateException("entry " + i + " is not Target.hit: " + e.method());
            }
            if (i == warm) {
                start = System.nanoTime();
            }
            if (i + 1 < entryCalls) {
                set.resume();
            }
        }
        double entryPerS = (entryCalls - 1 - warm) * 1e9 / (System.nanoTime() - start);
        erm.deleteEventRequest(entries);

        // 1b. The same with suspend policy none (as tracers ask), up to a breakpoint at the end of
        // the loop: from the first entry to that breakpoint.
        set = runTo(erm, queue, set, line(bench, entryStart));
        entries = erm.createMethodEntryRequest();
        entries.addClassFilter("AgentBench$Target");
        entries.setSuspendPolicy(EventRequest.SUSPEND_NONE);
        entries.enable();
        BreakpointRequest end = erm.createBreakpointRequest(line(bench, entryEnd));
        end.enable();
        set.resume();
        int seen = 0;
        start = 0;
        while (true) {
            set = next(queue);
            if (set.stream().anyMatch(BreakpointEvent.class::isInstance)) {
                break;
            }
            for (Event e : set) {
                if (!(e instanceof MethodEntryEvent)) {
                    throw new IllegalStateException("expected method entries, got " + set);
                }
                if (seen++ == 0) {
                    start = System.nanoTime();
                }
            }
        }
        double entryNonePerS = (seen - 1) * 1e9 / (System.nanoTime() - start);
        if (seen != entryCalls) {
            throw new IllegalStateException(seen + " entries (suspend none), not " + entryCalls);
        }
        erm.deleteEventRequest(entries);
        erm.deleteEventRequest(end);

        // 2. Step throughput: one step request (line, over) left enabled, each step resumed.
        set = runTo(erm, queue, set, line(bench, stepsStart));
        ThreadReference main = ((BreakpointEvent) first(set, BreakpointEvent.class)).thread();
        StepRequest stepper = erm.createStepRequest(main, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
        stepper.enable();
        warm = stepEvents / 10;
        start = System.nanoTime();
        for (int i = 0; i < stepEvents; i++) {
            set.resume();
            set = expect(queue, StepEvent.class);
            if (i == warm) {
                start = System.nanoTime();
            }
        }
        double stepTpPerS = (stepEvents - 1 - warm) * 1e9 / (System.nanoTime() - start);
        erm.deleteEventRequest(stepper);

        // 3. Step over a CPU-bound call (a one-shot step request each time, as debuggers step).
        BreakpointRequest overBp = erm.createBreakpointRequest(line(bench, over));
        overBp.enable();
        set.resume();
        double[] overMs = new double[overReps];
        double spinMs = 0;
        for (int r = 0; r < overReps; r++) {
            set = expect(queue, BreakpointEvent.class);
            if (r == 0) {
                Field f = bench.fieldByName("spinNanos");
                spinMs = ((LongValue) bench.getValue(f)).value() / 1e6;
            }
            StepRequest step = erm.createStepRequest(main, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
            step.addCountFilter(1);
            step.enable();
            long t0 = System.nanoTime();
            set.resume();
            set = expect(queue, StepEvent.class);
            overMs[r] = (System.nanoTime() - t0) / 1e6;
            int landed = ((StepEvent) first(set, StepEvent.class)).location().lineNumber();
            if (landed != overEnd) {
                throw new IllegalStateException("step over landed on line " + landed + ", not " + overEnd);
            }
            erm.deleteEventRequest(step);
            if (r + 1 < overReps) {
                set.resume();
            }
        }
        erm.deleteEventRequest(overBp);
        double overFirstMs = overMs[0];
        Arrays.sort(overMs);
        double overMedianMs = overMs[overMs.length / 2];

        // 4. THREADS threads hitting one breakpoint, first with suspend policy all, then with event
        // thread; every hit resumed.
        double[] mtPerS = new double[2];
        int[] policies = {EventRequest.SUSPEND_ALL, EventRequest.SUSPEND_EVENT_THREAD};
        for (int p = 0; p < 2; p++) {
            set = runTo(erm, queue, set, line(bench, threadsStart));
            BreakpointRequest bp = erm.createBreakpointRequest(line(bench, shared));
            bp.setSuspendPolicy(policies[p]);
            bp.enable();
            set.resume();
            int total = threads * threadHits;
            warm = total / 10;
            start = System.nanoTime();
            for (int i = 0; i < total; i++) {
                set = expect(queue, BreakpointEvent.class);
                if (set.size() != 1) {
                    throw new IllegalStateException("a hit with " + set.size() + " events: " + set);
                }
                if (i == warm) {
                    start = System.nanoTime();
                }
                if (i + 1 < total) {
                    set.resume();
                }
            }
            mtPerS[p] = (total - 1 - warm) * 1e9 / (System.nanoTime() - start);
            erm.deleteEventRequest(bp);
        }
        set.resume();

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
        System.out.printf(Locale.ROOT,
                "RESULT entry_per_s=%.1f entry_none_per_s=%.1f step_tp_per_s=%.1f spin_ms=%.3f over_ms=%.3f"
                        + " over_first_ms=%.3f mt_all_per_s=%.1f mt_thread_per_s=%.1f%n",
                entryPerS, entryNonePerS, stepTpPerS, spinMs, overMedianMs, overFirstMs, mtPerS[0], mtPerS[1]);
    }

    static Location line(ReferenceType type, int line) throws Exception {
        return type.locationsOfLine(line).get(0);
    }

    static Event first(EventSet set, Class<? extends Event> kind) {
        return set.stream().filter(kind::isInstance).findFirst().orElseThrow();
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
        if (((LocatableEvent) first(hit, BreakpointEvent.class)).location().lineNumber() != location.lineNumber()) {
            throw new IllegalStateException("expected a hit at " + location + ", got " + hit);
        }
        erm.deleteEventRequest(bp);
        return hit;
    }
}
