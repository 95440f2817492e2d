#include "supervisor/control/exec_session.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/json_text.h"
#include "base/json_writer.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "isolation/cgroup_session.h"
#include "supervisor/control/exec_streams.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/task_join.h"

struct exec_session {
	struct exec_session *next;
	struct exec_sessions *owner;
	struct task *task;
	struct control_client *client; /* NULL once it went away */
	pid_t pid;
	struct loop_watch pidfd_watch;
	struct loop_watch error_watch; /* the command's exec failure, or EOF */
	struct task_join join;         /* what a failure message names */
	/* Its own cgroup below the task's (dir_fd -1 without cgroups: its
	 * process group is killed instead), watched after the command's end
	 * until what it left behind is dead and the directory can go. */
	struct cgroup_session cgroup;
	struct loop_watch cgroup_events_watch;
	uint64_t oom_kills_at_start; /* the task's count, to tell the command's kills */
	bool killed_by_corral;       /* its SIGKILL was ours, not the OOM killer's */
	char failure[320];           /* "exec /x: No such file or directory"; "": it ran */
	char command[64];
};

static void send_line(struct exec_session *session, json_t *object)
{
	size_t length;
	char *line = json_line_take(object, &length);
	if (line && session->client)
		control_client_finish(session->client, line, length);
	free(line);
	session->client = NULL;
}

static void unlink_from(struct exec_session **list, struct exec_session *session)
{
	struct exec_session **link = list;
	while (*link && *link != session)
		link = &(*link)->next;
	if (*link)
		*link = session->next;
	session->next = NULL;
}

static void close_watch(struct loop *loop, struct loop_watch *watch)
{
	if (watch->fd < 0)
		return;
	loop_watch_remove(loop, watch);
	close(watch->fd);
	watch->fd = -1;
}

/* Freed after this event batch (exec_sessions_collect): an event of the
 * batch may still name its watches. */
static void retire(struct exec_session *session)
{
	struct exec_sessions *sessions = session->owner;
	close_watch(sessions->loop, &session->cgroup_events_watch);
	cgroup_session_release(&session->cgroup);
	session->next = sessions->retired;
	sessions->retired = session;
}

/* Every process of the session: its cgroup, else its process group (a
 * child that called setsid escapes that; there is no better handle). */
static void kill_tree(struct exec_session *session)
{
	session->killed_by_corral = true;
	if (session->cgroup.dir_fd >= 0 && cgroup_session_kill(&session->cgroup) == 0)
		return;
	kill(-session->pid, SIGKILL);
	kill(session->pid, SIGKILL);
}

static void on_cgroup_events(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	struct exec_session *session = watch->data;
	if (cgroup_session_populated(watch->fd))
		return;
	cgroup_session_remove(&session->cgroup);
	unlink_from(&session->owner->draining, session);
	retire(session);
}

/* The command is gone: what it left behind goes too (an exec session
 * leaves nothing running in the task), then its cgroup, once empty. */
static void end_tree(struct exec_session *session)
{
	struct exec_sessions *sessions = session->owner;
	if (session->cgroup.dir_fd < 0) {
		kill(-session->pid, SIGKILL);
		retire(session);
		return;
	}
	cgroup_session_kill(&session->cgroup);
	if (cgroup_session_remove(&session->cgroup) != -EBUSY) {
		retire(session);
		return;
	}
	int events = cgroup_session_open_events(&session->cgroup);
	if (events < 0) {
		/* The task's cgroup removal takes it (cgroup_fs_remove_tree). */
		retire(session);
		return;
	}
	session->cgroup_events_watch =
	    (struct loop_watch){.fd = events, .callback = on_cgroup_events, .data = session};
	loop_watch_add(sessions->loop, &session->cgroup_events_watch, EPOLLPRI);
	session->next = sessions->draining;
	sessions->draining = session;
	/* Emptied between the rmdir and the watch: no event would come. */
	if (!cgroup_session_populated(events))
		on_cgroup_events(&session->cgroup_events_watch, EPOLLPRI);
}

/* The command ended: its exit to the client, 128+N for signal N, and the
 * setup step that failed when it never ran. */
static void finish(struct exec_session *session, const siginfo_t *info)
{
	struct loop *loop = session->owner->loop;
	/* An exec failure written just before the exit is read now. */
	if (session->error_watch.fd >= 0 && !session->failure[0])
		task_join_read_failure(&session->join, session->error_watch.fd, session->failure,
				       sizeof(session->failure));
	task_join_release(&session->join);
	close_watch(loop, &session->error_watch);
	close_watch(loop, &session->pidfd_watch);
	json_t *reply = json_object();
	int code = info->si_code == CLD_EXITED ? info->si_status : 128 + info->si_status;
	json_object_set_new(reply, "exit_code", json_integer(code));
	if (info->si_code != CLD_EXITED)
		json_object_set_new(reply, "signal", json_string(signal_name(info->si_status)));
	/* Its OOM kill is the exec's, never a mark on the task's run. */
	bool sigkilled =
	    info->si_code == CLD_KILLED && info->si_status == SIGKILL && !session->killed_by_corral;
	unsigned oom_kills = task_exec_ended(session->task, session->oom_kills_at_start, sigkilled);
	if (oom_kills) {
		json_object_set_new(reply, "oom_killed", json_true());
		json_object_set_new(reply, "oom_kills", json_integer(oom_kills));
	}
	if (session->failure[0])
		json_object_set_new(reply, "error", json_string(session->failure));
	send_line(session, reply);
	unlink_from(&session->owner->first, session);
	end_tree(session);
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
	(void)events;
	struct exec_session *session = watch->data;
	siginfo_t info = {0};
	if (waitid(P_PIDFD, (id_t)watch->fd, &info, WEXITED | WNOHANG) == 0 && info.si_pid)
		finish(session, &info);
}

static void on_error_pipe(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	struct exec_session *session = watch->data;
	task_join_read_failure(&session->join, watch->fd, session->failure,
			       sizeof(session->failure));
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

/* The ok reply, with the client's ends of the streams: it relays them. */
static void send_start_reply(struct control_client *client, pid_t pid, struct exec_streams *streams)
{
	json_t *names = json_array();
	for (size_t i = 0; i < streams->client_fd_count; i++)
		json_array_append_new(names, json_string(streams->client_names[i]));
	json_t *reply = json_pack("{s:b, s:i, s:o}", "ok", 1, "pid", (int)pid, "streams", names);
	size_t length;
	char *line = json_line_take(reply, &length);
	control_client_send_with_fds(client, line, length, streams->client_fds,
				     streams->client_fd_count);
	streams->client_fd_count = 0; /* taken over */
	free(line);
}

int exec_session_start(struct exec_sessions *sessions, struct task *task,
		       struct control_client *client, const struct control_request *request,
		       char *error, size_t error_size)
{
	struct exec_streams_request wanted = {.stdin_relayed = request->stdin_relayed,
					      .tty = request->tty,
					      .rows = request->rows,
					      .columns = request->columns};
	struct exec_streams streams;
	int opened = exec_streams_open(&streams, &wanted, error, error_size);
	if (opened < 0)
		return opened;
	struct exec_session *session = xcalloc(1, sizeof(*session));
	session->owner = sessions;
	session->task = task;
	session->cgroup_events_watch.fd = -1;
	/* Without a v2 leaf (cgroups off) the session has none either. */
	cgroup_session_create(&session->cgroup, &task->cgroup, ++sessions->serial);
	session->oom_kills_at_start = task_exec_started(task);
	struct task_join_request join = {.argv = request->argv,
					 .env = request->env,
					 .user = request->user[0] ? request->user : NULL,
					 .cwd = request->cwd[0] ? request->cwd : NULL,
					 .fds = streams.command_fds,
					 .fd_count = 3,
					 .take_terminal = request->tty,
					 .cgroup_fd = session->cgroup.dir_fd};
	struct spawn_result started;
	int result = task_join_spawn(task, &join, &session->join, &started, error, error_size);
	exec_streams_close_command_side(&streams);
	if (result < 0) {
		task_exec_ended(task, session->oom_kills_at_start, false);
		exec_streams_close_client_side(&streams);
		cgroup_session_remove(&session->cgroup);
		cgroup_session_release(&session->cgroup);
		free(session);
		return result;
	}
	session->client = client;
	session->pid = started.pid;
	snprintf(session->command, sizeof(session->command), "%s", request->argv[0]);
	session->pidfd_watch =
	    (struct loop_watch){.fd = started.pidfd, .callback = on_exit_watch, .data = session};
	session->error_watch =
	    (struct loop_watch){.fd = started.error_fd, .callback = on_error_pipe, .data = session};
	loop_watch_add(sessions->loop, &session->error_watch, EPOLLIN);
	loop_watch_add(sessions->loop, &session->pidfd_watch, EPOLLIN);
	session->next = sessions->first;
	sessions->first = session;
	send_start_reply(client, started.pid, &streams);
	control_client_follow(client, CONTROL_FOLLOW_EXEC, session);
	return 0;
}

void exec_session_client_gone(struct exec_sessions *sessions, const void *pointer)
{
	for (struct exec_session *session = sessions->first; session; session = session->next)
		if (session == pointer) {
			session->client = NULL;
			kill_tree(session);
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
	kill_tree(session);
	siginfo_t info = {0};
	waitid(P_PIDFD, (id_t)session->pidfd_watch.fd, &info, WEXITED);
	finish(session, &info);
}

/* Its leftovers are being killed with the task, whose cgroup removal
 * removes the session's too: nothing to wait for here. */
static void stop_draining(struct exec_sessions *sessions, const struct task *task)
{
	struct exec_session *session = sessions->draining, *next;
	for (; session; session = next) {
		next = session->next;
		if (!task || session->task == task) {
			unlink_from(&sessions->draining, session);
			retire(session);
		}
	}
}

void exec_sessions_forget_task(struct exec_sessions *sessions, const struct task *task)
{
	struct exec_session *session = sessions->first, *next;
	for (; session; session = next) {
		next = session->next;
		if (session->task == task)
			kill_and_reap(session);
	}
	stop_draining(sessions, task);
}

void exec_sessions_close(struct exec_sessions *sessions)
{
	while (sessions->first)
		kill_and_reap(sessions->first);
	stop_draining(sessions, NULL);
	exec_sessions_collect(sessions);
}
