/* What happened to a task or a group, as the event log shows it. Every
 * name here is in docs/cli.md's event table, and only these
 * (tests/unit/test_event_docs.c compares them). */
#pragma once

#include <stdint.h>

enum task_event_type {
	TASK_EVENT_RECEIVED,          /* known, waiting for its stage gate */
	TASK_EVENT_STARTED,           /* exec succeeded */
	TASK_EVENT_START_FAILED,      /* clone or a setup step or exec failed */
	TASK_EVENT_EXITED,            /* the main process ended */
	TASK_EVENT_RESTARTING,        /* will run again, maybe after a delay */
	TASK_EVENT_NOT_RESTARTING,    /* done: by policy, or failed for good */
	TASK_EVENT_KILLING,           /* stop signal sent */
	TASK_EVENT_KILL_TIMEOUT,      /* kill timeout passed: SIGKILL sent */
	TASK_EVENT_KILLED,            /* dead after a stop corral asked for */
	TASK_EVENT_RESTART_REQUESTED, /* Restart or ForceRestart */
	TASK_EVENT_LEFTOVERS_KILLED,  /* processes left behind were killed */
	TASK_EVENT_OOM_KILLED,        /* the OOM killer killed processes of the task */
	TASK_EVENT_READY,             /* said it is ready (readiness:), or again */
	TASK_EVENT_NOT_READY,         /* not ready within readiness.timeout: stopped; or,
				       * with readiness.continuous, no longer ready */
	TASK_EVENT_UNHEALTHY,         /* its health probe failed too often: restarted */
	TASK_EVENT_HOOK_FAILED,       /* a poststart, prekill, exited or stop hook failed */
	TASK_EVENT_PROBE_FAILED,      /* a readiness or health probe failed (probe_record.h) */
	TASK_EVENT_PROBE_PASSED,      /* the health probe passed again after failing */
	TASK_EVENT_UPDATED,           /* a reload changed it in place */
	TASK_EVENT_REPLACED,          /* a reload changed it: a new process takes over */
	TASK_EVENT_REMOVED,           /* a reload removed it: it stops */
	TASK_EVENT_HEALTHY,           /* its health probe passed, first in this run */
	TASK_EVENT_SCHEDULED,         /* its schedule started a run, or skipped one */
	TASK_EVENT_WATCH_TRIGGERED,   /* a path its `watch:` lists changed: what was done */
	TASK_EVENT_WATCH_FAILED,      /* a path of its `watch:` cannot be watched */
	/* Of a task written with `instances:`, named as a whole (g/web): */
	TASK_EVENT_ROLLING,      /* a rolling restart began, replaced one, was done */
	TASK_EVENT_ROLL_STOPPED, /* a new instance never became ready: the roll stopped */
	TASK_EVENT_SCALED,       /* corral scale changed how many instances it has */
};
#define TASK_EVENT_TYPE_COUNT 28

/* "received", "started", "start_failed", ... (stable: the JSON log uses it) */
const char *task_event_type_name(enum task_event_type type);

enum group_event_type {
	GROUP_EVENT_LIFECYCLE,       /* its coordinator moved: "lifecycle prestart -> main" */
	GROUP_EVENT_STOPPING,        /* it stops for good, and why */
	GROUP_EVENT_RESTARTING,      /* it restarts: requested, or on_failure: restart */
	GROUP_EVENT_FINISHED,        /* every task is dead, poststop tasks done */
	GROUP_EVENT_FAILURE_IGNORED, /* on_failure: ignore left a failed task dead */
};
#define GROUP_EVENT_TYPE_COUNT 5

/* "lifecycle", "stopping", ... (stable, as task event names are) */
const char *group_event_type_name(enum group_event_type type);

/* Events of corral as a whole. */
enum corral_event_type {
	CORRAL_EVENT_RELOAD_STARTED,  /* a reload's plan is being applied */
	CORRAL_EVENT_RELOAD_FINISHED, /* ... and was */
	CORRAL_EVENT_RELOAD_REFUSED,  /* a reload changed nothing: the config's errors, or why */
	CORRAL_EVENT_UPGRADE_STARTED, /* corral execs a new binary (the last event before) */
	CORRAL_EVENT_UPGRADED,        /* the new corral took every task over */
	CORRAL_EVENT_UPGRADE_FAILED,  /* corral runs on as it was: why */
	CORRAL_EVENT_RESTORED,        /* its loop process died; the keeper started one that took
				       * the tasks back */
};
#define CORRAL_EVENT_TYPE_COUNT 7

const char *corral_event_type_name(enum corral_event_type type);
