#include "supervisor/tasks/task_join.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/oom_protection.h"
#include "base/xmalloc.h"
#include "config/ids.h"
#include "supervisor/tasks/task.h"

/* What failed in the command's setup, for the message. */
enum exec_stage {
	EXEC_STAGE_NONE,
	EXEC_STAGE_SESSION,
	EXEC_STAGE_ISOLATION, /* rlimits, umask, capability bounding set */
	EXEC_STAGE_SETGROUPS,
	EXEC_STAGE_SETGID,
	EXEC_STAGE_SETUID,
	EXEC_STAGE_CAPABILITIES,
	EXEC_STAGE_SECCOMP,
	EXEC_STAGE_CHDIR,
	EXEC_STAGE_EXEC,
};

static const char *const stage_names[] = {
    [EXEC_STAGE_NONE] = "setup",
    [EXEC_STAGE_SESSION] = "setsid",
    [EXEC_STAGE_ISOLATION] = "limits",
    [EXEC_STAGE_SETGROUPS] = "setgroups",
    [EXEC_STAGE_SETGID] = "setgid",
    [EXEC_STAGE_SETUID] = "setuid",
    [EXEC_STAGE_CAPABILITIES] = "capabilities",
    [EXEC_STAGE_SECCOMP] = "seccomp",
    [EXEC_STAGE_CHDIR] = "chdir",
    [EXEC_STAGE_EXEC] = "exec",
};

/* ---- what the command is given, prepared before the fork ---- */

struct exec_plan {
	char *const *argv;
	char **envp; /* owned, strings too */
	const char *cwd;
	bool change_ids;
	bool keep_groups;       /* task_plan.h */
	char oom_score_adj[12]; /* task_plan.h */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t group_count;
	struct spawn_isolation isolation; /* the task's, without what makes namespaces */
	/* The task's rlimits, set by the helper before it joins a user
	 * namespace: inside one, no hard limit could be raised. */
	const struct rlimit_config *rlimits;
	size_t rlimit_count;
	int target_pidfd;    /* the task's process */
	int namespaces;      /* CLONE_NEW* it has of its own */
	int cgroup_procs[9]; /* v2, then v1 cgroup.procs files; -1 ends */
};

static void free_plan(struct exec_plan *plan)
{
	for (char **string = plan->envp; string && *string; string++)
		free(*string);
	free(plan->envp);
	free(plan->groups);
	if (plan->target_pidfd >= 0)
		close(plan->target_pidfd);
	for (int i = 0; plan->cgroup_procs[i] >= 0; i++)
		close(plan->cgroup_procs[i]);
}

/* The task's environment, with the request's NAME=VALUE over it. */
static char **environment(const struct task *task, char *const *overrides)
{
	char **base = task_plan_environment(&task->plan);
	size_t count = 0, extra = 0;
	while (base[count])
		count++;
	while (overrides && overrides[extra])
		extra++;
	char **envp = xcalloc(count + extra + 1, sizeof(*envp));
	size_t used = 0;
	for (size_t i = 0; i < count; i++) {
		size_t name = strcspn(base[i], "=");
		bool replaced = false;
		for (size_t j = 0; j < extra && !replaced; j++)
			replaced = strncmp(overrides[j], base[i], name + 1) == 0;
		if (!replaced)
			envp[used++] = xstrdup(base[i]);
	}
	for (size_t j = 0; j < extra; j++)
		envp[used++] = xstrdup(overrides[j]);
	free(base);
	return envp;
}

/* "name", "uid", "uid:gid" or "name:group": the host's passwd and group
 * databases, or numbers (config/ids.h: in range, never cut to 32 bits). */
static int resolve_user(const char *text, struct exec_plan *plan, char *error, size_t size)
{
	char name[256];
	snprintf(name, sizeof(name), "%s", text);
	if (id_spec_check(name, error, size) < 0)
		return -1;
	char *colon = strchr(name, ':');
	if (colon)
		*colon = '\0';
	uint32_t uid;
	struct passwd *entry = NULL;
	if (id_text_read(name, strlen(name), &uid) != ID_TEXT_NUMBER) {
		entry = getpwnam(name);
		if (!entry) {
			snprintf(error, size, "user \"%s\": no such user", name);
			return -1;
		}
		uid = entry->pw_uid;
	}
	plan->change_ids = true;
	plan->uid = (uid_t)uid;
	plan->gid = entry ? entry->pw_gid : (gid_t)uid;
	free(plan->groups);
	plan->groups = NULL;
	plan->group_count = 0;
	if (colon) {
		uint32_t gid;
		if (id_text_read(colon + 1, strlen(colon + 1), &gid) != ID_TEXT_NUMBER) {
			struct group *group = getgrnam(colon + 1);
			if (!group) {
				snprintf(error, size, "group \"%s\": no such group", colon + 1);
				return -1;
			}
			gid = group->gr_gid;
		}
		plan->gid = (gid_t)gid;
	}
	return 0;
}

/* Which namespaces of the task's process are not corral's own. */
static int own_namespaces(pid_t pid)
{
	static const struct {
		const char *name;
		int flag;
	} kinds[] = {{"mnt", CLONE_NEWNS},   {"uts", CLONE_NEWUTS}, {"ipc", CLONE_NEWIPC},
		     {"net", CLONE_NEWNET},  {"pid", CLONE_NEWPID}, {"cgroup", CLONE_NEWCGROUP},
		     {"user", CLONE_NEWUSER}};
	int flags = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char mine[64], theirs[64];
		struct stat a, b;
		snprintf(mine, sizeof(mine), "/proc/self/ns/%s", kinds[i].name);
		snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", (int)pid, kinds[i].name);
		if (stat(mine, &a) == 0 && stat(theirs, &b) == 0 && a.st_ino != b.st_ino)
			flags |= kinds[i].flag;
	}
	return flags;
}

static int prepare(struct exec_plan *plan, const struct task *task,
		   const struct task_join_request *request, char *error, size_t size)
{
	memset(plan, 0, sizeof(*plan));
	plan->target_pidfd = -1;
	plan->cgroup_procs[0] = -1;
	pid_t pid = task_command_pid(task);
	plan->argv = request->argv;
	plan->envp = environment(task, request->env);
	plan->cwd = request->cwd ? request->cwd : task->config->cwd;
	plan->change_ids = task->plan.change_ids;
	plan->keep_groups = task->plan.keep_groups;
	memcpy(plan->oom_score_adj, task->plan.oom_score_adj, sizeof(plan->oom_score_adj));
	plan->uid = task->plan.uid;
	plan->gid = task->plan.gid;
	if (task->plan.group_count) {
		plan->groups = xcalloc(task->plan.group_count, sizeof(gid_t));
		memcpy(plan->groups, task->plan.groups, task->plan.group_count * sizeof(gid_t));
		plan->group_count = task->plan.group_count;
	}
	if (request->user && resolve_user(request->user, plan, error, size) < 0)
		return -1;
	if (task->isolation) {
		/* Its limits and privileges, none of what makes namespaces:
		 * the command joins the task's. */
		plan->isolation = (struct spawn_isolation){
		    .umask = task->isolation->spawn.umask,
		    .capabilities = task->isolation->spawn.capabilities,
		    .no_new_privileges = task->isolation->spawn.no_new_privileges,
		    .seccomp = task->isolation->spawn.seccomp,
		};
		/* A task in a user namespace has its limits set by corral
		 * (task_isolation.h, parent_rlimits), not by its spawn. */
		const struct task_isolation *isolation = task->isolation;
		bool by_parent = isolation->parent_rlimit_count > 0;
		plan->rlimits = by_parent ? isolation->parent_rlimits : isolation->spawn.rlimits;
		plan->rlimit_count =
		    by_parent ? isolation->parent_rlimit_count : isolation->spawn.rlimit_count;
	} else {
		plan->isolation.umask = -1;
	}
	plan->target_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (plan->target_pidfd < 0) {
		snprintf(error, size, "the task's process %d: %s", (int)pid, strerror(errno));
		return -1;
	}
	plan->namespaces = own_namespaces(pid);
	size_t used = 0;
	if (request->cgroup_procs_fd >= 0) {
		int fd = fcntl(request->cgroup_procs_fd, F_DUPFD_CLOEXEC, 3);
		if (fd >= 0)
			plan->cgroup_procs[used++] = fd;
	} else if (task_cgroup_exists(&task->cgroup)) {
		int fd = task_cgroup_open_file(&task->cgroup, "cgroup.procs", O_WRONLY);
		if (fd >= 0)
			plan->cgroup_procs[used++] = fd;
	}
	for (size_t i = 0; i < task->cgroup.v1_count && used < 8; i++) {
		int fd = open(task->cgroup.v1_join_paths[i], O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			plan->cgroup_procs[used++] = fd;
	}
	plan->cgroup_procs[used] = -1;
	return 0;
}

/* ---- the command's side, after the fork: a process of its own ---- */

static void __attribute__((noreturn)) command_fail(int error_fd, int stage, int error)
{
	int report[2] = {stage, error};
	ssize_t ignored = write(error_fd, report, sizeof(report));
	(void)ignored;
	_exit(error == ENOENT ? 127 : 126);
}

static void __attribute__((noreturn)) run_command(const struct exec_plan *plan, int error_fd)
{
	int stage, index;
	/* corral blocks the signals it takes through its signalfd, and
	 * ignores SIGPIPE: the command gets the defaults, as a task does. */
	for (int signal_number = 1; signal_number < NSIG; signal_number++)
		signal(signal_number, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		command_fail(error_fd, EXEC_STAGE_SESSION, errno);
	/* A terminal on stdin becomes the session's: a shell gets job control. */
	if (isatty(STDIN_FILENO))
		ioctl(STDIN_FILENO, TIOCSCTTY, 0);
	if (spawn_isolation_before_ids(&plan->isolation, &stage, &index) < 0)
		command_fail(error_fd, EXEC_STAGE_ISOLATION, errno);
	if (plan->change_ids) {
		if (!plan->keep_groups && setgroups(plan->group_count, plan->groups) < 0)
			command_fail(error_fd, EXEC_STAGE_SETGROUPS, errno);
		if (setgid(plan->gid) < 0)
			command_fail(error_fd, EXEC_STAGE_SETGID, errno);
		if (setuid(plan->uid) < 0)
			command_fail(error_fd, EXEC_STAGE_SETUID, errno);
	}
	if (spawn_isolation_after_ids(&plan->isolation, &stage, &index) < 0)
		command_fail(error_fd, EXEC_STAGE_CAPABILITIES, errno);
	if (plan->cwd && chdir(plan->cwd) < 0)
		command_fail(error_fd, EXEC_STAGE_CHDIR, errno);
	/* execvpe looks argv[0] up in the PATH of the command's own
	 * environment, inside the task's root. */
	extern char **environ;
	environ = plan->envp;
	if (spawn_isolation_seccomp(&plan->isolation, &stage) < 0)
		command_fail(error_fd, EXEC_STAGE_SECCOMP, errno);
	/* Nothing of corral's but 0, 1 and 2 goes past the exec. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	execvpe(plan->argv[0], plan->argv, plan->envp);
	command_fail(error_fd, EXEC_STAGE_EXEC, errno);
}

/* The helper: into the task's cgroup and namespaces, then the command as
 * corral's child (CLONE_PARENT), its pid to corral; then it exits. */
static void __attribute__((noreturn))
run_helper(const struct exec_plan *plan, const int *fds, size_t fd_count, int pid_fd, int error_fd)
{
	int devnull = open("/dev/null", O_RDWR);
	for (int i = 0; i < 3; i++)
		dup2((size_t)i < fd_count ? fds[i] : devnull, i);
	char text[16];
	int length = snprintf(text, sizeof(text), "%d", (int)getpid());
	for (int i = 0; plan->cgroup_procs[i] >= 0; i++)
		if (write(plan->cgroup_procs[i], text, (size_t)length) < 0)
			command_fail(error_fd, EXEC_STAGE_NONE, errno);
	for (size_t i = 0; i < plan->rlimit_count; i++) {
		const struct rlimit_config *limit = &plan->rlimits[i];
		struct rlimit value = {.rlim_cur = limit->soft, .rlim_max = limit->hard};
		if (syscall(SYS_prlimit64, 0, limit->resource, &value, NULL) < 0)
			command_fail(error_fd, EXEC_STAGE_ISOLATION, errno);
	}
	if (plan->namespaces && setns(plan->target_pidfd, plan->namespaces) < 0)
		command_fail(error_fd, EXEC_STAGE_NONE, errno);
	struct clone_args args = {.flags = CLONE_PARENT};
	long pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0)
		command_fail(error_fd, EXEC_STAGE_NONE, errno);
	if (pid == 0) {
		close(pid_fd);
		run_command(plan, error_fd);
	}
	pid_t child = (pid_t)pid;
	ssize_t ignored = write(pid_fd, &child, sizeof(child));
	(void)ignored;
	_exit(0);
}

int task_join_spawn(struct task *task, const struct task_join_request *request,
		    struct task_join_result *result, char *error, size_t error_size)
{
	struct exec_plan plan;
	int pid_pipe[2] = {-1, -1}, error_pipe[2] = {-1, -1};
	int outcome = -1;
	pid_t helper, command = 0;
	if (prepare(&plan, task, request, error, error_size) < 0)
		goto out;
	if (pipe2(pid_pipe, O_CLOEXEC) < 0 || pipe2(error_pipe, O_CLOEXEC) < 0) {
		snprintf(error, error_size, "pipe: %s", strerror(errno));
		goto out;
	}
	helper = fork();
	if (helper < 0) {
		snprintf(error, error_size, "fork: %s", strerror(errno));
		goto out;
	}
	if (helper == 0) {
		oom_protection_set_own(plan.oom_score_adj);
		close(pid_pipe[0]);
		close(error_pipe[0]);
		run_helper(&plan, request->fds, request->fd_count, pid_pipe[1], error_pipe[1]);
	}
	close(pid_pipe[1]);
	close(error_pipe[1]);
	pid_pipe[1] = error_pipe[1] = -1;
	/* The helper does a few syscalls and exits: waiting for it is short. */
	ssize_t got;
	do
		got = read(pid_pipe[0], &command, sizeof(command));
	while (got < 0 && errno == EINTR);
	int status;
	while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(command) || command <= 0) {
		int report[2] = {0, EIO};
		if (read(error_pipe[0], report, sizeof(report)) != (ssize_t)sizeof(report))
			report[1] = EIO;
		snprintf(error, error_size, "cannot enter the task: %s", strerror(report[1]));
		goto out;
	}
	result->pid = command;
	result->pidfd = (int)syscall(SYS_pidfd_open, command, 0);
	result->error_fd = error_pipe[0];
	error_pipe[0] = -1;
	outcome = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (pid_pipe[i] >= 0)
			close(pid_pipe[i]);
		if (error_pipe[i] >= 0)
			close(error_pipe[i]);
	}
	free_plan(&plan);
	return outcome;
}

bool task_join_read_failure(int error_fd, char *message, size_t size, const char *command)
{
	int report[2];
	if (read(error_fd, report, sizeof(report)) != (ssize_t)sizeof(report))
		return false;
	int stage = report[0] < 0 || report[0] > EXEC_STAGE_EXEC ? 0 : report[0];
	snprintf(message, size, "%s %s: %s", stage_names[stage], command, strerror(report[1]));
	return true;
}
