/*
 * Crash protection for the CPU sampler's stack walks (see src/profiling/fault_guard.rs).
 *
 * HotSpot's AsyncGetCallTrace (JDK 17) reads another frame's memory without checks of its own and
 * can fault on a stack it catches mid-change. The walk runs in our SIGPROF handler; a fault there
 * would take the JVM down. So the walk runs behind sigsetjmp, and a SIGSEGV/SIGBUS handler
 * installed in front of the VM's own jumps back when the faulting thread is inside a guarded
 * walk. Every other fault (HotSpot takes them on purpose: implicit null checks, safepoint polls,
 * stack banging) is handed to the handler that was there before, with the same arguments, as if
 * ours were not there.
 *
 * This is C because sigsetjmp returns twice, which Rust cannot express.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Threads inside a guarded walk at once: one per CPU is what SIGPROF can interrupt at a time; a
 * walk that finds no free slot is not made (the caller drops the sample). */
#define GUARD_SLOTS 64

struct guard_slot {
    long owner;        /* kernel thread ID of the thread in the walk, 0 when free */
    sigjmp_buf *jump;  /* where that thread goes back to on a fault */
};

static struct guard_slot slots[GUARD_SLOTS];
/* Walks in progress, so that a fault outside any (the usual case) skips the slot search. */
static int walking;
/* The handlers that were there before ours: [0] SIGSEGV, [1] SIGBUS. */
static struct sigaction previous[2];
static long passed_on;
static long recovered;

static long current_tid(void) {
    return syscall(SYS_gettid);
}

static void pass_on(int sig, siginfo_t *info, void *context) {
    struct sigaction *prev = &previous[sig == SIGBUS];
    __atomic_add_fetch(&passed_on, 1, __ATOMIC_RELAXED);
    if (prev->sa_flags & SA_SIGINFO) {
        prev->sa_sigaction(sig, info, context);
    } else if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN) {
        /* Nobody handled faults before us: put that back. A real fault then happens again when
         * the faulting instruction runs again on return, and gets the default action, as it
         * would have without us; a signal sent (kill, si_code <= 0) is sent again, to the same
         * end. */
        sigaction(sig, prev, NULL);
        if (info->si_code <= 0) {
            raise(sig);
        }
    } else {
        prev->sa_handler(sig);
    }
}

static void on_fault(int sig, siginfo_t *info, void *context) {
    if (__atomic_load_n(&walking, __ATOMIC_ACQUIRE) > 0) {
        long tid = current_tid();
        for (int i = 0; i < GUARD_SLOTS; i++) {
            if (__atomic_load_n(&slots[i].owner, __ATOMIC_ACQUIRE) == tid) {
                __atomic_add_fetch(&recovered, 1, __ATOMIC_RELAXED);
                siglongjmp(*slots[i].jump, 1);
            }
        }
    }
    pass_on(sig, info, context);
}

/* Called once (fault_guard.rs keeps the answer): a second install would take our own handler
 * for the previous one. */
int jdwp_agent_fault_guard_install(void) {
    static const int signals[2] = {SIGSEGV, SIGBUS};
    for (int i = 0; i < 2; i++) {
        if (sigaction(signals[i], NULL, &previous[i]) != 0) {
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        /* The previous handler's mask and flags (HotSpot's: the same stack, the same signals
         * blocked), so that it runs under ours as it ran alone. */
        struct sigaction action = previous[i];
        action.sa_sigaction = on_fault;
        action.sa_flags = (previous[i].sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
        if (sigaction(signals[i], &action, NULL) != 0) {
            return -1;
        }
    }
    return 0;
}

typedef void (*guarded_walk_fn)(void *trace, int depth, void *context);

int jdwp_agent_fault_guard_call(guarded_walk_fn walk, void *trace, int depth, void *context) {
    long tid = current_tid();
    int slot = -1;
    for (int i = 0; i < GUARD_SLOTS && slot < 0; i++) {
        long expected = 0;
        if (__atomic_compare_exchange_n(&slots[i].owner, &expected, tid, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            slot = i;
        }
    }
    if (slot < 0) {
        return 2;
    }
    sigjmp_buf jump;
    int faulted = 0;
    /* Read only by a fault handler on this very thread, after this store. */
    slots[slot].jump = &jump;
    __atomic_add_fetch(&walking, 1, __ATOMIC_ACQ_REL);
    /* 1: the signal mask is saved here and restored by the jump (the fault handler's blocked
     * signals are unblocked again). */
    if (sigsetjmp(jump, 1) == 0) {
        walk(trace, depth, context);
    } else {
        faulted = 1;
    }
    __atomic_sub_fetch(&walking, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&slots[slot].owner, 0, __ATOMIC_RELEASE);
    return faulted;
}

void jdwp_agent_fault_guard_counts(long *passed, long *recovered_out) {
    *passed = __atomic_load_n(&passed_on, __ATOMIC_RELAXED);
    *recovered_out = __atomic_load_n(&recovered, __ATOMIC_RELAXED);
}

/* For the tests: a walk that faults (a write to an unmapped address). */
void jdwp_agent_fault_guard_test_fault(void *trace, int depth, void *context) {
    (void)trace;
    (void)depth;
    (void)context;
    *(volatile int *)16 = 1;
}
