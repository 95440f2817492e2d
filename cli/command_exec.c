/* corral exec: a command inside a running task (exec_session.h). corral
 * makes the command's pipes, or a pseudo-terminal with -t, and hands the
 * CLI their other ends with its reply; the CLI relays them to its own
 * stdio (exec_relay.h) until the command's exit, which becomes its own. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/control_client.h"
#include "cli/exec_relay.h"
#include "config/text/ids.h"

static void print_exec_usage(FILE *out)
{
	fprintf(out,
		"usage: corral exec [--socket PATH | -c CONFIG] [-i] [-t] [-u USER] [-e "
		"NAME=VALUE]... [-w DIR]\n"
		"                   GROUP/TASK -- COMMAND [ARG]...\n\n"
		"Runs COMMAND inside a running task: in its namespaces, root, cgroup, user and\n"
		"groups, capabilities, seccomp filter, rlimits, umask, environment and working\n"
		"directory. Its output and input are relayed through pipes corral makes:\n"
		"no fd of this terminal enters the task. Exits with COMMAND's code (128+N\n"
		"when killed by signal N; 127 when it is not found). Killing this client\n"
		"kills COMMAND and everything it started.\n\n"
		"  -i, --interactive  relay stdin (else COMMAND reads /dev/null)\n"
		"  -t, --tty          run COMMAND on a pseudo-terminal of corral's, relayed\n"
		"                     to this terminal\n"
		"  -u, --user USER    name, uid or uid:gid instead of the task's user\n"
		"  -e, --env NAME=VALUE\n"
		"                     over the task's environment; repeatable\n"
		"  -w, --workdir DIR  instead of the task's working directory\n"
		"  --socket PATH      corral's control socket\n"
		"  -c, --config CONFIG\n"
		"                     the socket that CONFIG's socket: names\n"
		"\n" CONTROL_SOCKET_SEARCH_HELP "\n"
		"Only root and corral's own user may exec.\n");
}

static int send_request(int socket_fd, const char *line)
{
	size_t length = strlen(line);
	for (size_t done = 0; done < length;) {
		ssize_t sent = send(socket_fd, line + done, length - done, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0) {
			int failure = errno;
			fprintf(stderr, "corral: cannot send the request: %s\n", strerror(failure));
			return sent < 0 ? -failure : -EPIPE;
		}
		done += (size_t)sent;
	}
	return 0;
}

/* The fds that come with the replies (the streams, with the first). */
struct received_fds {
	int fds[3];
	size_t count;
};

static ssize_t receive(int socket_fd, char *buffer, size_t size, struct received_fds *received)
{
	union {
		struct cmsghdr header;
		char space[CMSG_SPACE(sizeof(int) * 3)];
	} control;
	struct iovec vector = {.iov_base = buffer, .iov_len = size};
	struct msghdr message = {.msg_iov = &vector,
				 .msg_iovlen = 1,
				 .msg_control = &control,
				 .msg_controllen = sizeof(control)};
	ssize_t got = recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
	for (struct cmsghdr *header = got >= 0 ? CMSG_FIRSTHDR(&message) : NULL; header;
	     header = CMSG_NXTHDR(&message, header)) {
		if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS)
			continue;
		size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fds[3];
		memcpy(fds, CMSG_DATA(header), count * sizeof(int));
		for (size_t i = 0; i < count; i++) {
			if (received->count < 3)
				received->fds[received->count++] = fds[i];
			else
				close(fds[i]);
		}
	}
	return got;
}

/* Reads one reply line (a JSON object); NULL when the connection ended. */
static json_t *read_reply(int socket_fd, char *buffer, size_t size, size_t *used,
			  struct received_fds *received)
{
	for (;;) {
		char *newline = memchr(buffer, '\n', *used);
		if (newline) {
			json_t *reply = json_loadb(buffer, (size_t)(newline - buffer), 0, NULL);
			size_t rest = *used - (size_t)(newline + 1 - buffer);
			memmove(buffer, newline + 1, rest);
			*used = rest;
			return reply;
		}
		if (*used == size)
			return NULL;
		ssize_t got = receive(socket_fd, buffer + *used, size - *used, received);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return NULL;
		*used += (size_t)got;
	}
}

/* The streams the reply names, to their places; false when they do not
 * match what came (a server that passed none, or others). */
static bool take_streams(const json_t *reply, struct received_fds *received,
			 struct exec_relay_fds *fds)
{
	*fds = (struct exec_relay_fds){-1, -1, -1, -1};
	const json_t *names = json_object_get(reply, "streams");
	if (!json_is_array(names) || json_array_size(names) != received->count)
		return false;
	for (size_t i = 0; i < received->count; i++) {
		const char *name = json_string_value(json_array_get(names, i));
		int *place = !name                     ? NULL
			     : !strcmp(name, "stdin")  ? &fds->stdin_pipe
			     : !strcmp(name, "stdout") ? &fds->stdout_pipe
			     : !strcmp(name, "stderr") ? &fds->stderr_pipe
			     : !strcmp(name, "tty")    ? &fds->tty
						       : NULL;
		if (!place || *place >= 0)
			return false;
		*place = received->fds[i];
	}
	received->count = 0;
	return fds->tty >= 0 || (fds->stdout_pipe >= 0 && fds->stderr_pipe >= 0);
}

static void close_received(struct received_fds *received)
{
	for (size_t i = 0; i < received->count; i++)
		close(received->fds[i]);
	received->count = 0;
}

/* ---- -t: our terminal raw while corral's pseudo-terminal is relayed ---- */

static struct termios saved_terminal;
static bool terminal_raw;
static volatile int window_changed;

static void on_window_change(int signal_number)
{
	(void)signal_number;
	window_changed = 1;
}

static void restore_terminal(void)
{
	if (terminal_raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_terminal);
	terminal_raw = false;
}

/* The window's size goes with the request: corral sets it on the pty
 * before the command starts, which then sees it at its first look. */
static void read_window_size(struct control_request *request)
{
	struct winsize window;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &window) == 0 ||
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &window) == 0) {
		request->rows = window.ws_row;
		request->columns = window.ws_col;
	}
}

static void make_terminal_raw(void)
{
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_terminal) == 0) {
		struct termios raw = saved_terminal;
		cfmakeraw(&raw);
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0) {
			terminal_raw = true;
			atexit(restore_terminal);
		}
	}
	struct sigaction action = {.sa_handler = on_window_change};
	sigaction(SIGWINCH, &action, NULL);
}

int command_exec(int argc, char **argv)
{
	static const struct option options[] = {
	    CONTROL_SOCKET_OPTIONS,
	    {"interactive", no_argument, NULL, 'i'},
	    {"tty", no_argument, NULL, 't'},
	    {"user", required_argument, NULL, 'u'},
	    {"env", required_argument, NULL, 'e'},
	    {"workdir", required_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct control_request request = {.command = CONTROL_EXEC};
	struct control_socket_choice socket_choice = {0};
	bool interactive = false, tty = false;
	char *env[256] = {NULL};
	size_t env_count = 0;
	int option;
	optind = 1;
	while ((option = getopt_long(argc, argv, "+c:itu:e:w:h", options, NULL)) != -1) {
		switch (option) {
		case 'i':
			interactive = true;
			break;
		case 't':
			tty = true;
			break;
		case 'u': {
			char problem[160];
			if (!optarg[0] || strlen(optarg) >= sizeof(request.user))
				return command_usage_error("exec", print_exec_usage,
							   "-u %s: expected a name, uid or uid:gid",
							   optarg);
			if (id_spec_check(optarg, problem, sizeof(problem)) < 0)
				return command_usage_error("exec", print_exec_usage, "-u %s: %s",
							   optarg, problem);
			snprintf(request.user, sizeof(request.user), "%s", optarg);
			break;
		}
		case 'e':
			if (!strchr(optarg, '=') || optarg[0] == '=' || env_count == 255)
				return command_usage_error("exec", print_exec_usage,
							   "-e %s: expected NAME=VALUE", optarg);
			env[env_count++] = optarg;
			break;
		case 'w':
			if (optarg[0] != '/')
				return command_usage_error("exec", print_exec_usage,
							   "-w %s: expected an absolute path",
							   optarg);
			snprintf(request.cwd, sizeof(request.cwd), "%s", optarg);
			break;
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg, print_exec_usage,
						  &code))
				return code;
			break;
		}
		}
	}
	/* GROUP/TASK, then "--" (optional), then the command. */
	int command_at = optind + 1;
	if (command_at < argc && strcmp(argv[command_at], "--") == 0)
		command_at++;
	if (optind >= argc || command_at >= argc)
		return command_usage_error("exec", print_exec_usage,
					   "expected GROUP/TASK -- COMMAND [ARG]...");
	if (command_set_target("exec", print_exec_usage, &request, argv[optind]) != 0)
		return COMMAND_USAGE_ERROR;
	request.argv = argv + command_at;
	request.env = env_count ? env : NULL;
	/* With -t our stdin goes to the pty, as a terminal's would. */
	request.stdin_relayed = interactive && !tty;
	request.tty = tty;
	if (tty)
		read_window_size(&request);
	char *line = control_request_encode(&request);
	request.argv = request.env = NULL;
	if (!line)
		return command_usage_error("exec", print_exec_usage,
					   "the request cannot be encoded");

	int socket_fd = control_socket_connect(control_socket_path(&socket_choice));
	if (socket_fd < 0) {
		free(line);
		return 1;
	}
	int sent = send_request(socket_fd, line);
	free(line);
	if (sent < 0)
		return 1;

	char buffer[65536];
	size_t used = 0;
	struct received_fds received = {.count = 0};
	struct exec_relay_fds streams;
	json_t *reply = read_reply(socket_fd, buffer, sizeof(buffer), &used, &received);
	if (!reply || !json_is_true(json_object_get(reply, "ok"))) {
		if (reply)
			control_connection_print_refusal(reply);
		else
			fprintf(stderr, "corral: corral closed the connection without replying\n");
		json_decref(reply);
		close_received(&received);
		return 1;
	}
	bool usable = take_streams(reply, &received, &streams);
	json_decref(reply);
	close_received(&received);
	if (!usable) {
		/* Closing the connection ends the command. */
		fprintf(stderr, "corral: corral's reply did not bring the command's streams\n");
		return 1;
	}
	/* A stream that closes must be an error we can pass on, not our end. */
	signal(SIGPIPE, SIG_IGN);
	if (tty)
		make_terminal_raw();
	exec_relay_run(socket_fd, &streams, &window_changed);
	json_t *end = read_reply(socket_fd, buffer, sizeof(buffer), &used, &received);
	close_received(&received);
	restore_terminal();
	if (!end) {
		fprintf(stderr, "corral: the connection to corral ended before the command did\n");
		return 1;
	}
	const char *error = json_string_value(json_object_get(end, "error"));
	if (error)
		fprintf(stderr, "corral: %s\n", error);
	/* 137 with it: the kernel's SIGKILL, as a shell would say it. */
	if (json_is_true(json_object_get(end, "oom_killed")))
		fprintf(stderr, "corral: exec: OOM killed\n");
	int code = (int)json_integer_value(json_object_get(end, "exit_code"));
	json_decref(end);
	return code;
}
