/* Starting one task process: clone3 with CLONE_PIDFD, a short fixed setup
 * list in the child, then exec.
 *
 * Everything the child needs (argv, env, paths, ids) is prepared by the
 * caller before the clone, so the child runs only async-signal-safe calls.
 * A setup step that fails writes (stage, errno) to a CLOEXEC error pipe and
 * exits; a successful exec closes the pipe, which the parent sees as EOF.
 * The parent watches that pipe through its event loop, so a slow child never
 * blocks it. A task with a cgroup is cloned straight into it
 * (CLONE_INTO_CGROUP): it never runs a single instruction outside. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "isolation/spawn_executable.h"
#include "isolation/spawn_isolation.h"

/* The child's steps, in the order it takes them. */
enum spawn_stage {
	SPAWN_STAGE_SYNC, /* waiting for corral's step (spawn_request.between) */
	SPAWN_STAGE_CGROUP_V1,
	SPAWN_STAGE_NETWORK_NAMESPACE,
	SPAWN_STAGE_JOIN_NAMESPACES,    /* a join (spawn_join): setns through the task's pidfd */
	SPAWN_STAGE_JOIN_PID_NAMESPACE, /* a join's clone into the task's pid namespace */
	SPAWN_STAGE_SIGNALS,
	SPAWN_STAGE_SESSION,
	SPAWN_STAGE_STDIO,
	SPAWN_STAGE_CGROUP_NAMESPACE,
	SPAWN_STAGE_MOUNT_PRIVATE,
	SPAWN_STAGE_PROC,
	SPAWN_STAGE_ROOTFS,       /* the rootfs bound onto itself, opened */
	SPAWN_STAGE_MOUNT_TARGET, /* index: the mount plan's step */
	SPAWN_STAGE_MOUNT,        /* index: the mount plan's step */
	SPAWN_STAGE_PIVOT_ROOT,
	SPAWN_STAGE_MASK,
	SPAWN_STAGE_HIDE_CONTROL_SOCKET,
	SPAWN_STAGE_READ_ONLY,
	SPAWN_STAGE_READONLY_ROOTFS,
	SPAWN_STAGE_HOSTNAME,
	SPAWN_STAGE_LOOPBACK,
	SPAWN_STAGE_RLIMIT,
	SPAWN_STAGE_CAPABILITY_BOUNDING,
	SPAWN_STAGE_KEEP_CAPABILITIES,
	SPAWN_STAGE_CHDIR,
	SPAWN_STAGE_SETGROUPS,
	SPAWN_STAGE_SETGID,
	SPAWN_STAGE_SETUID,
	SPAWN_STAGE_CAPSET,
	SPAWN_STAGE_AMBIENT_CAPABILITIES,
	SPAWN_STAGE_NO_NEW_PRIVILEGES,
	SPAWN_STAGE_NOTIFY_FD,
	SPAWN_STAGE_REAPER_STATUS_FD,
	SPAWN_STAGE_SECCOMP,
	SPAWN_STAGE_EXEC,
	SPAWN_STAGE_EXEC_REAPER,
	SPAWN_STAGE_REAPER_MEMFD, /* corral could not make it at start */
	SPAWN_STAGE_OOM_SCORE,    /* back to the oom_score_adj corral started with */
};

/* Fd slots reserved once, below every fd the tasks make corral open.
 *
 * Why: a child that copies corral's whole fd table (3 fds per task) and
 * closes it again at exec makes every spawn cost O(tasks), and starting N
 * tasks O(N^2). Instead the child shares the table (CLONE_FILES, with
 * CLONE_VFORK so that corral does not touch it meanwhile, or, in a spawn
 * with a parent step, corral waiting for the child's "ready") and unshares only
 * the fds below `copy_limit` (close_range CLOSE_RANGE_UNSHARE). The parent
 * parks what the child needs in the slots just before the clone. */
struct spawn_slots {
	int stdin_fd;  /* /dev/null, or a join's stdin during its spawn */
	int output_fd; /* the task's output pipe, refreshed per spawn */
	int stderr_fd; /* its stderr: the output pipe, or a pipe of its own, during a spawn */
	int error_fd;  /* the error pipe's write end during a spawn, else /dev/null */
	int notify_fd; /* a readiness pipe's write end during a spawn, else /dev/null */
	int sync_fd;   /* the child's end of the sync socket during a spawn with a
			* parent step (spawn_request.between), else /dev/null */
	/* During a spawn, the namespaces the child joins with setns: a
	 * network namespace corral prepared, or the pidfd of the task a join
	 * enters; else /dev/null. */
	int namespace_fd;
	int reaper_status_fd; /* the reaper's end of its status socket during a
			       * spawn of a task with a reaper, else /dev/null */
	int reaper_fd;        /* corral's reaper program (a sealed memfd), which isolated
			       * tasks exec as their pid namespace's PID 1 */
	int executable_fd;    /* the file a spawn with exec_from_fd executes, during
			       * that spawn, else /dev/null */
	int reaper_error;     /* 0, or the errno that kept that memfd from being made */
	int devnull_fd;
	unsigned copy_limit; /* first fd the child does not copy */
};

/* Opens /dev/null into the low slots, and the reaper's memfd into its
 * slot. Call before opening anything that grows with the number of tasks.
 * Returns 0 or -errno. */
int spawn_slots_open(struct spawn_slots *slots);
void spawn_slots_close(struct spawn_slots *slots);

/* Work corral does for a child after the clone and before the child's first
 * setup step, while the child waits: a user namespace's uid/gid maps, links
 * moved into its network namespace. Returns 0, or -errno with `message`
 * saying which step failed and why ("write uid_map: Invalid argument"). */
typedef int spawn_between_fn(void *context, pid_t pid, int pidfd, char *message, size_t size);

/* Join mode: the process starts inside a running task (`corral exec`,
 * probes with `inside: true`) instead of in namespaces of its own. The
 * child takes the request's cgroup (into_cgroup, cgroup_v1_join), its
 * oom_score_adj, these limits, then the task's namespaces, and goes on with
 * the same steps as a task's own start: signals, session, stdio, the
 * isolation's umask and capabilities, ids, no_new_privs, seccomp, exec.
 *
 * The task's pid namespace applies to the caller's children only: corral
 * enters it for the clone and goes back to its own right after, so that
 * the process is corral's child, its exit seen through its pidfd. When
 * corral may not (without CAP_SYS_ADMIN in its own user namespace), the
 * child enters it with the others and clones the process once more, as
 * corral's child (CLONE_PARENT); the loop's SIGCHLD sweep reaps the first. */
struct spawn_join {
	int pidfd;                /* the task's process */
	unsigned long namespaces; /* CLONE_NEW* of that process not corral's own */
	int stdin_fd;             /* -1: /dev/null */
	/* The task's limits, set before its user namespace is joined:
	 * inside it, no hard limit could be raised. */
	const struct rlimit_config *rlimits;
	size_t rlimit_count;
	/* argv[0] along the PATH of envp, tried in turn as execvp does: only
	 * inside the task's root can the child tell which one exists
	 * (spawn_join_executable_candidates). */
	char *const *executable_candidates;
};

struct spawn_request {
	const char *executable; /* resolved path, see spawn_resolve_executable; in a
				 * join, argv[0], for messages */
	/* Execute `executable_fd` (open, O_PATH will do) instead of the file
	 * at `executable` (which then only names it in messages): the very
	 * file corral opened and checked, whatever is at its path since (a
	 * new binary's check, `corral upgrade`). A script works too: the
	 * child clears the fd's close-on-exec, so its interpreter can open
	 * /dev/fd/N. */
	bool exec_from_fd;
	int executable_fd;
	char *const *argv;
	char *const *envp;
	const char *cwd; /* NULL: keep corral's */
	bool change_ids;
	bool keep_groups; /* with change_ids: no setgroups (task_plan.h) */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t group_count;
	int output_fd; /* becomes both stdout and stderr; stdin is /dev/null */
	/* Instead: stdin_fd becomes stdin (a hook reads its request there). */
	bool stdin_given;
	int stdin_fd;
	/* log.streams: separate: stderr is stderr_fd instead. */
	bool separate_stderr;
	int stderr_fd;
	/* Instead: the task keeps corral's own stdin, stdout and stderr
	 * (one-command mode, as tini passes a terminal on untouched). */
	bool inherit_stdio;
	/* After setsid, make stdin, a terminal corral let go of, the
	 * session's controlling terminal (dumb-init's TIOCSCTTY), so that a
	 * shell gets job control. A failure is not one: the task runs
	 * without. */
	bool take_terminal;
	bool into_cgroup; /* clone into the v2 cgroup at cgroup_fd */
	int cgroup_fd;
	/* NULL or NULL-terminated: the `tasks` files of the v1 groups the
	 * child joins first thing, before any other setup step. */
	char *const *cgroup_v1_join;
	/* readiness `notify: fd`: notify_fd (a pipe's write end) becomes fd
	 * notify_target in the task, kept open across exec. -1: none. */
	int notify_target;
	int notify_fd;
	/* A task whose pid namespace has corral's reaper: reaper_status_fd
	 * (its end of a socket, see isolation/reaper/reaper.c) becomes fd
	 * reaper_status_target, which the reaper's argv names. 0: none. */
	int reaper_status_target;
	int reaper_status_fd;
	/* Text for /proc/self/oom_score_adj (the task's `oom_score_adj:`);
	 * NULL or "": the value corral started with, when corral changed its
	 * own (spawn_reset_oom_score_adj_to). */
	const char *oom_score_adj;
	const struct spawn_isolation *isolation; /* NULL: none */
	/* NULL: the fast path, CLONE_VFORK. Else the clone is not a vfork:
	 * the child waits on the sync socket until `between` returned (and
	 * is killed and reaped when it fails), then corral waits until it
	 * has exec'd or failed. See docs/decisions.md, "Isolation". */
	spawn_between_fn *between;
	void *between_context;
	/* isolation->join_network_namespace: the namespace (an fd of corral's)
	 * the child joins with setns, prepared by corral (network.h). */
	int netns_fd;
	/* NULL: a process of its own. Else it joins a running task: its
	 * output_fd is stdout, separate_stderr and stderr_fd stderr, and the
	 * isolation holds no namespaces (clone_flags 0). */
	const struct spawn_join *join;
};

struct spawn_result {
	pid_t pid;
	int pidfd;         /* CLOEXEC */
	int error_fd;      /* read end of the error pipe, CLOEXEC and non-blocking */
	char message[160]; /* when spawn_process failed: "clone3: ...", or why
			    * `between` did */
};

struct spawn_failure {
	enum spawn_stage stage;
	int error; /* errno in the child */
	int index; /* which v1 cgroup, rlimit, capability or mount step */
};

/* corral lowered its own oom_score_adj (base/oom_protection.c):
 * every child sets `value`, the one corral started with, back before
 * anything else, so that the protection is corral's alone. */
void spawn_reset_oom_score_adj_to(int value);

/* corral lowered its own nice (base/cpu_precedence.h): every child goes
 * back to `value`, the nice corral started with. */
void spawn_reset_nice_to(int value);

/* What a child of `request` writes to its oom_score_adj ("": nothing). */
const char *spawn_oom_score_adj_text(const struct spawn_request *request);

/* Returns 0 with *result filled, or -errno when the clone itself or the
 * request's `between` step failed (result->message says which and why).
 * Returns once the child has exec'd or failed: microseconds. */
int spawn_process(struct spawn_slots *slots, const struct spawn_request *request,
		  struct spawn_result *result);

/* Reads the error pipe: 1 with *failure filled when setup failed, 0 when the
 * exec succeeded (EOF), -EAGAIN when the child has not got that far yet. */
int spawn_read_failure(int error_fd, struct spawn_failure *failure);

/* Formats a failure the way messages show it, e.g.
 * "exec /usr/bin/ap: No such file or directory". */
void spawn_failure_describe(const struct spawn_request *request,
			    const struct spawn_failure *failure, char *buffer, size_t size);
