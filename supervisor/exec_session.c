#include "supervisor/exec_session.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/units.h"
#include "config/xmalloc.h"
#include "supervisor/json_text.h"
#include "supervisor/json_writer.h"
#include "supervisor/oom_protection.h"
#include "supervisor/task.h"

struct exec_session {
	struct exec_session *next;
	struct exec_sessions *owner;
	const struct task *task;
	struct control_client *client; /* NULL once it went away */
	pid_t pid;
	struct loop_watch pidfd_watch;
	struct loop_watch error_watch; /* the command's exec failure, or EOF */
	int stage;                     /* what failed in the command's setup */
	int error;                     /* its errno; 0: the exec worked */
	char command[64];
};

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
	[EXEC_STAGE_NONE] = "setup",         [EXEC_STAGE_SESSION] = "setsid",
	[EXEC_STAGE_ISOLATION] = "limits",   [EXEC_STAGE_SETGROUPS] = "setgroups",
	[EXEC_STAGE_SETGID] = "setgid",      [EXEC_STAGE_SETUID] = "setuid",
	[EXEC_STAGE_CAPABILITIES] = "capabilities", [EXEC_STAGE_SECCOMP] = "seccomp",
	[EXEC_STAGE_CHDIR] = "chdir",        [EXEC_STAGE_EXEC] = "exec",
};

/* ---- what the command is given, prepared before the fork ---- */

struct exec_plan {
	char *const *argv;
	char **envp; /* owned, strings too */
	const char *cwd;
	bool change_ids;
	bool keep_groups; /* task_plan.h */
	char oom_score_adj[12]; /* task_plan.h */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t group_count;
	struct spawn_isolation isolation; /* the task's, without what makes namespaces */
	int target_pidfd;                 /* the task's process */
	int namespaces;                   /* CLONE_NEW* it has of its own */
	int cgroup_procs[9];              /* v2, then v1 cgroup.procs files; -1 ends */
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

/* "name", "uid" or "uid:gid": the host's passwd database, or numbers. */
static int resolve_user(const char *text, struct exec_plan *plan, char *error, size_t size)
{
	char name[256];
	snprintf(name, sizeof(name), "%s", text);
	char *colon = strchr(name, ':');
	if (colon)
		*colon = '\0';
	char *end;
	unsigned long uid = strtoul(name, &end, 10);
	struct passwd *entry = NULL;
	if (*end || end == name) {
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
		unsigned long gid = strtoul(colon + 1, &end, 10);
		struct group *group = NULL;
		if (*end || end == colon + 1) {
			group = getgrnam(colon + 1);
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
	} kinds[] = {{"mnt", CLONE_NEWNS},	 {"uts", CLONE_NEWUTS},   {"ipc", CLONE_NEWIPC},
		     {"net", CLONE_NEWNET},	 {"pid", CLONE_NEWPID},   {"cgroup", CLONE_NEWCGROUP},
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
			.rlimits = task->isolation->spawn.rlimits,
			.rlimit_count = task->isolation->spawn.rlimit_count,
			.umask = task->isolation->spawn.umask,
			.capabilities = task->isolation->spawn.capabilities,
			.no_new_privileges = task->isolation->spawn.no_new_privileges,
			.seccomp = task->isolation->spawn.seccomp,
		};
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
	if (task_cgroup_exists(&task->cgroup)) {
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
static void __attribute__((noreturn)) run_helper(const struct exec_plan *plan, const int *fds,
						 size_t fd_count, int pid_fd, int error_fd)
{
	int devnull = open("/dev/null", O_RDWR);
	for (int i = 0; i < 3; i++)
		dup2((size_t)i < fd_count ? fds[i] : devnull, i);
	char text[16];
	int length = snprintf(text, sizeof(text), "%d", (int)getpid());
	for (int i = 0; plan->cgroup_procs[i] >= 0; i++)
		if (write(plan->cgroup_procs[i], text, (size_t)length) < 0)
			command_fail(error_fd, EXEC_STAGE_NONE, errno);
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

/* ---- corral's side ---- */

static void send_line(struct exec_session *session, json_t *object)
{
	size_t length;
	char *line = json_line_take(object, &length);
	if (line && session->client)
		control_client_finish(session->client, line, length);
	free(line);
	session->client = NULL;
}

static void unlink_session(struct exec_session *session)
{
	struct exec_session **link = &session->owner->first;
	while (*link && *link != session)
		link = &(*link)->next;
	if (*link)
		*link = session->next;
}

static void close_watch(struct loop *loop, struct loop_watch *watch)
{
	if (watch->fd < 0)
		return;
	loop_watch_remove(loop, watch);
	close(watch->fd);
	watch->fd = -1;
}

/* The command ended: its exit to the client, 128+N for signal N, and the
 * setup step that failed when it never ran. */
static void finish(struct exec_session *session, const siginfo_t *info)
{
	struct loop *loop = session->owner->loop;
	/* An exec failure written just before the exit is read now. */
	int report[2];
	if (session->error_watch.fd >= 0 &&
	    read(session->error_watch.fd, report, sizeof(report)) == (ssize_t)sizeof(report)) {
		session->stage = report[0];
		session->error = report[1];
	}
	close_watch(loop, &session->error_watch);
	close_watch(loop, &session->pidfd_watch);
	json_t *reply = json_object();
	int code = info->si_code == CLD_EXITED ? info->si_status : 128 + info->si_status;
	json_object_set_new(reply, "exit_code", json_integer(code));
	if (info->si_code != CLD_EXITED)
		json_object_set_new(reply, "signal", json_string(signal_name(info->si_status)));
	if (session->error) {
		char message[256];
		snprintf(message, sizeof(message), "%s %s: %s",
			 stage_names[session->stage < 0 || session->stage > EXEC_STAGE_EXEC
					 ? 0
					 : session->stage],
			 session->command, strerror(session->error));
		json_object_set_new(reply, "error", json_string(message));
	}
	send_line(session, reply);
	unlink_session(session);
	session->next = session->owner->retired;
	session->owner->retired = session;
}

void exec_sessions_collect(struct exec_sessions *sessions)
{
	while (sessions->retired) {
		struct exec_session *session = sessions->retired;
		sessions->retired = session->next;
		free(session);
	}
}

static void on_exit_watch(struct loop_watch *watch, uint32_t events)
{
	struct exec_session *session = watch->data;
	siginfo_t info = {0};
	if (waitid(P_PIDFD, (id_t)watch->fd, &info, WEXITED | WNOHANG) == 0 && info.si_pid)
		finish(session, &info);
}

static void on_error_pipe(struct loop_watch *watch, uint32_t events)
{
	struct exec_session *session = watch->data;
	int report[2];
	if (read(watch->fd, report, sizeof(report)) == (ssize_t)sizeof(report)) {
		session->stage = report[0];
		session->error = report[1];
	}
	/* EOF: the exec worked (the pipe was CLOEXEC), or the report is in. */
	close_watch(session->owner->loop, watch);
}

bool exec_sessions_reap(struct exec_sessions *sessions, pid_t pid)
{
	for (struct exec_session *session = sessions->first; session; session = session->next)
		if (session->pid == pid) {
			siginfo_t info = {0};
			if (waitid(P_PIDFD, (id_t)session->pidfd_watch.fd, &info, WEXITED) == 0)
				finish(session, &info);
			return true;
		}
	return false;
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

int exec_session_start(struct exec_sessions *sessions, struct task *task,
		       struct control_client *client, const struct control_request *request,
		       int *fds, size_t fd_count, char *error, size_t error_size)
{
	struct task_join_request join = {.argv = request->argv, .env = request->env,
					 .user = request->user[0] ? request->user : NULL,
					 .cwd = request->cwd[0] ? request->cwd : NULL,
					 .fds = fds, .fd_count = fd_count};
	struct task_join_result started;
	int result = task_join_spawn(task, &join, &started, error, error_size);
	for (size_t i = 0; i < fd_count; i++)
		close(fds[i]);
	if (result < 0)
		return -1;
	struct exec_session *session = xcalloc(1, sizeof(*session));
	session->owner = sessions;
	session->task = task;
	session->client = client;
	session->pid = started.pid;
	snprintf(session->command, sizeof(session->command), "%s", request->argv[0]);
	session->pidfd_watch = (struct loop_watch){
		.fd = started.pidfd, .callback = on_exit_watch, .data = session};
	session->error_watch = (struct loop_watch){
		.fd = started.error_fd, .callback = on_error_pipe, .data = session};
	loop_watch_add(sessions->loop, &session->error_watch, EPOLLIN);
	loop_watch_add(sessions->loop, &session->pidfd_watch, EPOLLIN);
	session->next = sessions->first;
	sessions->first = session;
	json_t *reply = json_pack("{s:b, s:i}", "ok", 1, "pid", (int)started.pid);
	size_t length;
	char *line = json_line_take(reply, &length);
	control_client_send(client, line, length);
	free(line);
	control_client_follow(client, CONTROL_FOLLOW_EXEC, session);
	return 0;
}

void exec_session_client_gone(struct exec_sessions *sessions, const void *pointer)
{
	for (struct exec_session *session = sessions->first; session; session = session->next)
		if (session == pointer) {
			session->client = NULL;
			/* Its process group: what it started goes too. */
			kill(-session->pid, SIGKILL);
			kill(session->pid, SIGKILL);
		}
}

void exec_sessions_of_task_write(const struct exec_sessions *sessions, const struct task *task,
				 struct json_writer *writer)
{
	jw_array_open(writer);
	for (const struct exec_session *session = sessions->first; session; session = session->next)
		if (session->task == task) {
			jw_object_open(writer);
			jw_field_int(writer, "pid", session->pid);
			jw_field_cstring(writer, "command", session->command);
			jw_object_close(writer);
		}
	jw_array_close(writer);
}

static void kill_and_reap(struct exec_session *session)
{
	kill(-session->pid, SIGKILL);
	kill(session->pid, SIGKILL);
	siginfo_t info = {0};
	waitid(P_PIDFD, (id_t)session->pidfd_watch.fd, &info, WEXITED);
	finish(session, &info);
}

void exec_sessions_forget_task(struct exec_sessions *sessions, const struct task *task)
{
	struct exec_session *session = sessions->first, *next;
	for (; session; session = next) {
		next = session->next;
		if (session->task == task)
			kill_and_reap(session);
	}
}

void exec_sessions_close(struct exec_sessions *sessions)
{
	while (sessions->first)
		kill_and_reap(sessions->first);
	exec_sessions_collect(sessions);
}
