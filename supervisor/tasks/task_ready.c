#include "supervisor/tasks/task_ready.h"

#include "supervisor/tasks/instance_roll.h"
#include "supervisor/tasks/task_schedule.h"

struct ready_rule_facts task_ready_facts(const struct task *task, uint64_t now_ms)
{
	const struct runner *runner = &task->runner;
	enum lifecycle_stage stage = task->config->stage;
	return (struct ready_rule_facts){
	    .stays_up = stage == STAGE_MAIN || lifecycle_stage_is_sidecar(stage),
	    .state = ready_rule_state_parse(task_schedule_shown_state(task)),
	    .ready = runner_shown_ready(runner),
	    .ready_lost = runner_ready_lost(runner),
	    .failed = runner->failed,
	    .last_exit_failed = runner->has_exited && runner_last_exit_failed(runner),
	    .last_exit_requested = runner->has_exited && runner->last_exit_requested,
	    /* The reply's next_restart_in_ms: a delay still to run. */
	    .restart_pending = runner_waiting_out_delay(runner) && runner->next_start_ms > now_ms,
	    .roll_covered = instance_roll_covers(task),
	};
}
