#include "supervisor/upgrade.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "config/model/config_files.h"
#include "supervisor/keeper/keeper_handoff.h"
#include "supervisor/lifecycle/task_event.h"
#include "supervisor/restore.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/upgrade/upgrade_binary.h"
#include "supervisor/upgrade/upgrade_check.h"
#include "supervisor/upgrade_state.h"

extern char **environ;

static char **command_line;

/* The document being taken over: the memfd, what was read of it, and,
 * in an old binary the new one fell back to, why. */
static int resume_fd = -1;
static struct handover_reader resume_reader;
static bool resuming;
/* The document is a restore's (restore.h), not an upgrade's. */
static bool restoring;
static char *fallback_reason;
/* The config's files as the old corral read them (config_files.h). */
static struct config_files resume_config;

void upgrade_remember_command_line(int argc, char **argv)
{
	(void)argc;
	command_line = argv;
}

char *const *upgrade_command_line(void)
{
	return command_line;
}

int upgrade_print_format(void)
{
	/* For tests only: a binary that reads another format. */
	const char *simulated = getenv("CORRAL_TEST_HANDOVER_FORMAT");
	int format = simulated && *simulated ? atoi(simulated) : HANDOVER_FORMAT;
	printf("corral %s handover-format %d\n", CORRAL_VERSION, format);
	return 0;
}

/* ---- the exec ---- */

/* corral's environment with `extra` ("NAME=value", NULL-terminated) in
 * place of what it has of those names, and without `drop`: for the exec
 * only. setenv() is never called: it may move the array that the tasks'
 * plans borrow (task_plan.h), and an exec that fails returns here. */
static char **environment_with(char *const *extra, const char *drop)
{
	size_t count = 0, extra_count = 0;
	while (environ[count])
		count++;
	while (extra[extra_count])
		extra_count++;
	char **envp = xcalloc(count + extra_count + 1, sizeof(*envp));
	size_t kept = 0;
	for (size_t i = 0; i < count; i++) {
		bool replaced = drop && strncmp(environ[i], drop, strlen(drop)) == 0 &&
				environ[i][strlen(drop)] == '=';
		for (size_t j = 0; j < extra_count && !replaced; j++) {
			size_t name = strcspn(extra[j], "=");
			replaced = strncmp(environ[i], extra[j], name + 1) == 0;
		}
		if (!replaced)
			envp[kept++] = environ[i];
	}
	for (size_t j = 0; j < extra_count; j++)
		envp[kept++] = extra[j];
	return envp;
}

static void say_failed(struct supervisor *supervisor, const char *why)
{
	event_log_corral(&supervisor->events, corral_event_type_name(CORRAL_EVENT_UPGRADE_FAILED),
			 why);
}

/* An upgrade between its request and the exec: the new binary, opened
 * once, is being checked. */
struct upgrade_request {
	struct supervisor *supervisor;
	struct control_client *requester; /* NULL: SIGUSR2, or the client went */
	bool requester_gone;
	int binary_fd; /* O_PATH: what is checked is what is exec'd */
	char path[PATH_MAX];
	struct upgrade_check *check;
};

static void request_free(struct upgrade_request *request)
{
	if (request->supervisor->upgrade == request)
		request->supervisor->upgrade = NULL;
	close(request->binary_fd);
	free(request);
}

/* Execs the checked binary with the state handed over. Returns only when
 * that did not happen, with `why`; nothing was changed then. */
static void exec_checked(struct upgrade_request *request, char *error, size_t error_size)
{
	struct supervisor *supervisor = request->supervisor;
	const char *path = request->path;
	char message[PATH_MAX + 64];
	snprintf(message, sizeof(message), "executing %s; every task runs on", path);
	event_log_corral(&supervisor->events, corral_event_type_name(CORRAL_EVENT_UPGRADE_STARTED),
			 message);

	struct handover_writer writer;
	handover_writer_init(&writer);
	/* The binary running now: a new one that cannot take over comes
	 * back to it, even when its file was replaced on disk. */
	int old_binary = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	json_object_set_new(writer.root, "format", json_integer(HANDOVER_FORMAT));
	json_object_set_new(writer.root, "version", json_string(CORRAL_VERSION));
	json_object_set_new(writer.root, "binary", json_string(path));
	json_object_set_new(writer.root, "old_binary_fd", handover_fd(&writer, old_binary));
	/* Open across the exec, for a script's interpreter (/dev/fd/N); the
	 * new corral closes it (upgrade_finish). */
	json_object_set_new(writer.root, "binary_fd", handover_fd(&writer, request->binary_fd));
	json_object_set_new(writer.root, "written_at_ms", json_integer((json_int_t)loop_now_ms()));
	upgrade_state_write(supervisor, &writer, request->requester);
	int memfd = handover_writer_seal(&writer);
	int failure = memfd;
	if (memfd >= 0 && old_binary >= 0) {
		char variable[64], keeper_fd[64], restores[64];
		snprintf(variable, sizeof(variable), HANDOVER_FD_ENV "=%d", memfd);
		/* The keeper's channel goes over as at a restore: the new corral
		 * sends its records on the same one. */
		int channel = supervisor->keeper.channel;
		snprintf(keeper_fd, sizeof(keeper_fd), KEEPER_FD_ENV "=%d", channel);
		snprintf(restores, sizeof(restores), KEEPER_RESTORES_ENV "=%u",
			 supervisor->keeper.restores);
		char *extra[] = {variable, channel >= 0 ? keeper_fd : NULL, restores, NULL};
		if (channel < 0)
			extra[2] = NULL; /* no keeper: none of its variables */
		if (channel >= 0)
			handover_fds_keep_open(&channel, 1, true);
		char **envp = environment_with(extra, NULL);
		handover_fds_keep_open(writer.fds, writer.fd_count, true);
		syscall(SYS_execveat, request->binary_fd, "", command_line, envp, AT_EMPTY_PATH);
		failure = -errno;
		/* Nothing happened: the fds go back to close-on-exec. */
		handover_fds_keep_open(writer.fds, writer.fd_count, false);
		if (channel >= 0)
			handover_fds_keep_open(&channel, 1, false);
		free(envp);
	}
	snprintf(error, error_size, "%s %s: %s", memfd < 0 ? "the hand-over memfd" : "exec", path,
		 strerror(-failure));
	if (old_binary < 0)
		snprintf(error, error_size, "/proc/self/exe: %s", strerror(errno));
	if (memfd >= 0)
		close(memfd);
	if (old_binary >= 0)
		close(old_binary);
	handover_writer_free(&writer);
}

/* The upgrade did not happen: said in the event log, and to whoever
 * asked (the client's reply, or corral's log for SIGUSR2). */
static void tell_refused(struct upgrade_request *request, const char *why)
{
	say_failed(request->supervisor, why);
	if (!request->requester) {
		log_message("upgrade%s: %s; corral runs on as it was",
			    request->requester_gone ? " (its client went away)" : " (SIGUSR2)",
			    why);
		return;
	}
	char message[PATH_MAX + 1200];
	snprintf(message, sizeof(message), "upgrade: %s", why);
	char *reply = control_reply_error(message);
	control_client_send(request->requester, reply, strlen(reply));
	free(reply);
	control_client_resume(request->requester);
}

static void on_check_done(void *context, bool passed, const char *check_why)
{
	struct upgrade_request *request = context;
	struct supervisor *supervisor = request->supervisor;
	request->check = NULL;
	char error[PATH_MAX + 1024];
	snprintf(error, sizeof(error), "%s", check_why);
	if (request->requester_gone && passed)
		snprintf(error, sizeof(error),
			 "the client that asked went away before %s was checked", request->path);
	/* The check took a while: what it found may have changed since. */
	if (passed && !request->requester_gone &&
	    upgrade_state_possible(supervisor, error, sizeof(error)))
		exec_checked(request, error, sizeof(error));
	tell_refused(request, error);
	request_free(request);
}

static void on_requester_gone(void *data)
{
	struct upgrade_request *request = data;
	request->requester = NULL;
	request->requester_gone = true;
	upgrade_check_kill(request->check);
}

int upgrade_run(struct supervisor *supervisor, struct control_client *requester, const char *binary,
		char *error, size_t error_size)
{
	char path[PATH_MAX];
	if (supervisor->upgrade) {
		snprintf(error, error_size, "an upgrade to %s is being checked already",
			 supervisor->upgrade->path);
		return -EBUSY;
	}
	if (!upgrade_state_possible(supervisor, error, error_size)) {
		say_failed(supervisor, error);
		return -EBUSY;
	}
	int fd = upgrade_binary_open(binary, path, sizeof(path), error, error_size);
	if (fd < 0) {
		say_failed(supervisor, error);
		return fd;
	}
	struct upgrade_request *request = xcalloc(1, sizeof(*request));
	*request = (struct upgrade_request){
	    .supervisor = supervisor, .requester = requester, .binary_fd = fd};
	snprintf(request->path, sizeof(request->path), "%s", path);
	int failure =
	    upgrade_check_start(&request->check, supervisor->loop, &supervisor->spawn_slots, fd,
				path, on_check_done, request, error, error_size);
	if (failure < 0) {
		say_failed(supervisor, error);
		request_free(request);
		return failure;
	}
	supervisor->upgrade = request;
	if (requester)
		control_client_wait(requester, on_requester_gone, request);
	return 0;
}

bool upgrade_reap_check(struct supervisor *supervisor, pid_t pid)
{
	return supervisor->upgrade && upgrade_check_reap(supervisor->upgrade->check, pid);
}

void upgrade_cancel(struct supervisor *supervisor)
{
	struct upgrade_request *request = supervisor->upgrade;
	if (!request)
		return;
	upgrade_check_free(request->check);
	request->check = NULL;
	tell_refused(request, "corral is exiting");
	request_free(request);
}

/* ---- after the exec ---- */

static void fall_back_or_die(const char *why) __attribute__((noreturn));

static const struct config_files *replay_config(const struct handover_reader *reader,
						struct config_files *files)
{
	const json_t *config = json_object_get(reader->root, "config");
	size_t index;
	json_t *entry;
	json_array_foreach(json_object_get(config, "files"), index, entry)
	{
		const char *text, *path = handover_string(entry, "path");
		size_t size;
		if (path && handover_blob_get(reader, json_object_get(entry, "text"), &text, &size))
			config_files_add(files, path, text, size);
	}
	const json_t *expanded = json_object_get(config, "expanded");
	files->expanded = xcalloc(json_array_size(expanded) + 1, sizeof(*files->expanded));
	json_array_foreach(expanded, index, entry)
	{
		if (json_is_string(entry))
			files->expanded[files->expanded_count++] =
			    xstrdup(json_string_value(entry));
	}
	files->plain = handover_bool(config, "plain");
	return files;
}

/* What corral's parent gave it (NOTIFY_SOCKET, WATCHDOG_USEC), which the
 * start took out of the environment: set again before anything is made
 * from the environment, and taken as at a start (parent_notify.h). */
static void give_parent_variables_back(const json_t *parent)
{
	const char *socket = handover_string(parent, "notify_socket");
	if (!socket)
		return;
	setenv("NOTIFY_SOCKET", socket, 1);
	int64_t usec = handover_int(parent, "watchdog_usec", 0);
	if (usec > 0) {
		char number[32];
		snprintf(number, sizeof(number), "%lld", (long long)usec);
		setenv("WATCHDOG_USEC", number, 1);
		snprintf(number, sizeof(number), "%d", (int)getpid());
		setenv("WATCHDOG_PID", number, 1);
	}
}

/* The document in `resume_reader` checked, and its config's texts
 * replayed. */
static void resume_read(void)
{
	char error[512];
	int64_t format = handover_int(resume_reader.root, "format", -1);
	if (format != HANDOVER_FORMAT) {
		snprintf(error, sizeof(error), "it reads hand-over format %d, not %lld",
			 HANDOVER_FORMAT, (long long)format);
		fall_back_or_die(error);
	}
	config_files_replay(replay_config(&resume_reader, &resume_config));
	give_parent_variables_back(json_object_get(resume_reader.root, "parent"));
}

/* Reads the document in `fd` (an upgrade's memfd). */
static void resume_from(int fd)
{
	resume_fd = fd;
	resuming = true;
	char error[512];
	if (handover_reader_open(&resume_reader, resume_fd, error, sizeof(error)) < 0)
		fall_back_or_die(error);
	resume_read();
}

void upgrade_resume_begin(void)
{
	/* A loop process started by corral's keeper: after a loop died, the
	 * keeper's records are the document (restore.h). */
	if (restore_begin(&resume_reader) == 0) {
		restoring = resuming = true;
		resume_read();
		return;
	}
	const char *number = getenv(HANDOVER_FD_ENV);
	if (!number)
		return;
	int fd = atoi(number);
	unsetenv(HANDOVER_FD_ENV);
	const char *failed = getenv(HANDOVER_FAILED_ENV);
	if (failed) {
		fallback_reason = xstrdup(failed);
		unsetenv(HANDOVER_FAILED_ENV);
	}
	resume_from(fd);
	/* For tests only: a binary that passes the check and then cannot
	 * take over. */
	if (!fallback_reason && getenv("CORRAL_TEST_HANDOVER_REFUSE"))
		fall_back_or_die("it refused the state (CORRAL_TEST_HANDOVER_REFUSE, a test)");
}

bool upgrade_restoring(void)
{
	return restoring;
}

const struct handover_reader *upgrade_resuming(void)
{
	return resuming ? &resume_reader : NULL;
}

void upgrade_fall_back(const char *why)
{
	if (resuming)
		fall_back_or_die(why);
}

static void fall_back_or_die(const char *why)
{
	int old_binary = handover_fd_get(&resume_reader, resume_reader.root, "old_binary_fd");
	if (restoring) {
		/* No binary before to go back to: the keeper ends with this
		 * exit, and says so. */
		log_message("restore: cannot take the state back: %s", why);
		_exit(1);
	}
	if (fallback_reason || old_binary < 0 || !command_line) {
		/* The old binary itself cannot read what it wrote: nothing is
		 * left to run. */
		log_message("upgrade: cannot take the state back: %s", why);
		_exit(1);
	}
	log_message("upgrade: this binary cannot take over (%s): back to the one before", why);
	handover_fds_keep_open(resume_reader.fds, resume_reader.fd_count, true);
	handover_fds_keep_open(&resume_fd, 1, true);
	char variable[64];
	snprintf(variable, sizeof(variable), HANDOVER_FD_ENV "=%d", resume_fd);
	char *failed = xasprintf(HANDOVER_FAILED_ENV "=%s", why);
	/* The keeper's channel goes back with it, as it came. */
	char keeper_fd[64], restores[64];
	bool keeper = restore_keeper_variables(keeper_fd, restores, sizeof(keeper_fd));
	char *extra[] = {variable, failed, keeper ? keeper_fd : NULL, restores, NULL};
	char **envp = environment_with(extra, "CORRAL_TEST_HANDOVER_REFUSE");
	syscall(SYS_execveat, old_binary, "", command_line, envp, AT_EMPTY_PATH);
	log_message("upgrade: cannot execute the binary before: %s", strerror(errno));
	_exit(1);
}

static size_t count_tasks(const struct supervisor *supervisor)
{
	size_t count = 0;
	for (size_t i = 0; i < supervisor->group_count; i++)
		count += supervisor->groups[i]->task_count;
	return count;
}

void upgrade_finish(struct supervisor *supervisor)
{
	if (!resuming)
		return;
	if (restoring) {
		restore_finish(supervisor);
		handover_fds_keep_open(resume_reader.fds, resume_reader.fd_count, false);
		config_files_replay(NULL);
		config_files_free(&resume_config);
		handover_reader_free(&resume_reader);
		resuming = restoring = false;
		return;
	}
	int old_binary = handover_fd_get(&resume_reader, resume_reader.root, "old_binary_fd");
	int binary = handover_fd_get(&resume_reader, resume_reader.root, "binary_fd");
	handover_fds_keep_open(resume_reader.fds, resume_reader.fd_count, false);
	if (old_binary >= 0)
		close(old_binary);
	if (binary >= 0)
		close(binary);
	close(resume_fd);
	uint64_t written = (uint64_t)handover_int(resume_reader.root, "written_at_ms", 0);
	uint64_t now = loop_now_ms();
	char message[1024];
	bool failed = fallback_reason != NULL;
	if (failed)
		snprintf(message, sizeof(message),
			 "%s could not take over: %s; corral %s runs on, every task with it",
			 handover_string(resume_reader.root, "binary"), fallback_reason,
			 CORRAL_VERSION);
	else
		snprintf(message, sizeof(message),
			 "corral %s took over %zu task%s from corral %s in %llu ms (pid %d)",
			 CORRAL_VERSION, count_tasks(supervisor),
			 count_tasks(supervisor) == 1 ? "" : "s",
			 handover_string(resume_reader.root, "version"),
			 (unsigned long long)(now > written ? now - written : 0), (int)getpid());
	event_log_corral(
	    &supervisor->events,
	    corral_event_type_name(failed ? CORRAL_EVENT_UPGRADE_FAILED : CORRAL_EVENT_UPGRADED),
	    message);
	if (supervisor->upgrade_requester) {
		json_t *reply =
		    json_pack("{s:b,s:s}", "ok", !failed, failed ? "error" : "message", message);
		char *text = json_dumps(reply, JSON_COMPACT);
		size_t length = strlen(text);
		text = xreallocarray(text, length + 2, 1);
		memcpy(text + length, "\n", 2);
		control_client_send(supervisor->upgrade_requester, text, length + 1);
		free(text);
		json_decref(reply);
		supervisor->upgrade_requester = NULL;
	}
	/* A reload reads the files again. */
	config_files_replay(NULL);
	config_files_free(&resume_config);
	handover_reader_free(&resume_reader);
	free(fallback_reason);
	fallback_reason = NULL;
	resuming = false;
}
