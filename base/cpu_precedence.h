#ifndef CORRAL_CPU_PRECEDENCE_H
#define CORRAL_CPU_PRECEDENCE_H

#include <limits.h>
#include <stdbool.h>

/* corral's loop goes before its tasks for the CPU. Every answer (status,
 * /livez), every task's output and every exit is handled by that one
 * loop: tasks that keep every CPU busy must not make it wait its turn
 * behind them (issue 36: nothing a task does may stall the loop). At start
 * corral lowers its own nice by CPU_PRECEDENCE_STEPS, as the kubelet and
 * container runtimes get a CPU share of their own; every process it starts
 * goes back to the nice corral started with, so tasks are scheduled among
 * themselves exactly as before. corral spends CPU only on what its tasks
 * and clients ask of it: the precedence takes from them what serving them
 * costs, sooner. Lowering a nice needs CAP_SYS_NICE (or RLIMIT_NICE);
 * without it corral stays as it was, said with -v only. */
#define CPU_PRECEDENCE_STEPS 5

/* The same in cgroup v2 with the cpu controller, where a nice counts only
 * among the processes of one cgroup: corral's own leaf (ROOT/supervisor)
 * weighs 300 against each group's default 100 (nice -5 weighs 3.05 times
 * nice 0). */
#define CPU_PRECEDENCE_WEIGHT "300"

/* `started_with`: the nice of the corral before an upgrade's exec (its
 * hand-over says it), or CPU_PRECEDENCE_OWN: this process's own. */
#define CPU_PRECEDENCE_OWN INT_MIN
void cpu_precedence_start(int started_with);

/* The nice corral started with. */
int cpu_precedence_started_with(void);

/* True, with that nice, when corral lowered its own: every process it
 * starts goes back to it. */
bool cpu_precedence_children_nice(int *nice);

#endif
