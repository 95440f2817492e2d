#include "supervisor/keeper/keeper.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/keeper/keeper_channel.h"

/* What the keeper forwards to the loop; SIGCHLD is its own. */
static const int forwarded[] = {SIGTERM, SIGINT,   SIGHUP,  SIGQUIT, SIGUSR1,
				SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP};

struct keeper {
	const struct keeper_settings *settings;
	struct kept_records records;
	void *buffer; /* a message received */
	struct keeper_deaths deaths;
	unsigned restores;
	pid_t loop;
	int channel;       /* the keeper's end; -1 while no loop runs */
	bool channel_hung; /* the loop's end closed: not polled until the next loop */
	/* REAPED messages the loop has not said it acted on (SEEN), in
	 * order: the first `reaped_sent` are with the current loop, the rest
	 * wait (no loop runs, or its socket is full: hundreds of tasks
	 * stopping at once) and go as it drains. A new loop gets them all. */
	struct keeper_message *reaped;
	size_t reaped_count, reaped_sent, reaped_capacity;
	uint32_t reaped_number; /* the last one given */
	/* Signals that came while no loop ran, in order. */
	int waiting_signals[16];
	unsigned waiting_signal_count;
};

static uint64_t now_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

/* As many of the REAPED messages waiting as the loop's socket takes. */
static void send_reaped(struct keeper *keeper)
{
	while (keeper->channel >= 0 && keeper->reaped_sent < keeper->reaped_count &&
	       keeper_channel_send(keeper->channel, &keeper->reaped[keeper->reaped_sent], NULL,
				   NULL, NULL) == 0)
		keeper->reaped_sent++;
}

static bool reaped_waiting(const struct keeper *keeper)
{
	return keeper->reaped_sent < keeper->reaped_count;
}

/* SEEN `number`: the REAPED up to it are in the loop's records. */
static void reaped_seen(struct keeper *keeper, uint32_t number)
{
	size_t done = 0;
	while (done < keeper->reaped_sent && keeper->reaped[done].slot <= number)
		done++;
	memmove(keeper->reaped, keeper->reaped + done,
		(keeper->reaped_count - done) * sizeof(*keeper->reaped));
	keeper->reaped_count -= done;
	keeper->reaped_sent -= done;
}

static int start_loop(struct keeper *keeper)
{
	int ends[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) < 0)
		return -errno;
	pid_t pid = keeper->settings->start_loop(keeper->settings->context, ends[1],
						 &keeper->records, keeper->restores);
	close(ends[1]);
	if (pid < 0) {
		close(ends[0]);
		return (int)pid;
	}
	keeper->loop = pid;
	keeper->channel = ends[0];
	keeper->channel_hung = false;
	keeper->reaped_sent = 0; /* the dead loop may not have acted on them */
	send_reaped(keeper);
	for (unsigned i = 0; i < keeper->waiting_signal_count; i++)
		kill(keeper->loop, keeper->waiting_signals[i]);
	keeper->waiting_signal_count = 0;
	return 0;
}

static void loop_gone(struct keeper *keeper)
{
	keeper->loop = 0;
	if (keeper->channel >= 0)
		close(keeper->channel);
	keeper->channel = -1;
}

/* Every fd-holding message the loop sent before it died is read before
 * its death is acted on: what it held last is what the next one gets. */
static void read_channel(struct keeper *keeper)
{
	for (;;) {
		struct keeper_received received;
		int result = keeper_channel_receive(keeper->channel, keeper->buffer, &received);
		if (result == -EAGAIN || result == -EPIPE)
			return;
		if (result == 0 && received.message.kind == KEEPER_SEEN)
			reaped_seen(keeper, received.message.slot);
		else if (result == 0)
			keeper_channel_apply(&keeper->records, &received);
		else if (result != -EPROTO)
			return;
	}
}

/* A loop that never says SEEN (one from before SEEN, after `corral
 * upgrade` to it) does not grow the keeper without end: past this many,
 * the oldest sent go. */
#define REAPED_HELD_MAX 65536

static void tell_reaped(struct keeper *keeper, pid_t pid, int status)
{
	if (keeper->reaped_count >= REAPED_HELD_MAX && keeper->reaped_sent)
		reaped_seen(keeper, keeper->reaped[0].slot);
	if (keeper->reaped_count == keeper->reaped_capacity) {
		keeper->reaped_capacity = keeper->reaped_capacity * 2 + 64;
		keeper->reaped =
		    realloc(keeper->reaped, keeper->reaped_capacity * sizeof(*keeper->reaped));
		if (!keeper->reaped)
			abort(); /* the keeper cannot go on without its memory */
	}
	keeper->reaped[keeper->reaped_count++] = (struct keeper_message){
	    .kind = KEEPER_REAPED, .slot = ++keeper->reaped_number, .pid = pid, .status = status};
	send_reaped(keeper);
}

/* Given up on the loop: its tasks, the keeper's children now, are not
 * left running unsupervised (as PID 1, the kernel would end them with the
 * keeper anyway). Each is killed and reaped. */
static void kill_children(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	FILE *file = fopen(path, "re");
	if (!file)
		return;
	long pid;
	while (fscanf(file, "%ld", &pid) == 1)
		kill((pid_t)pid, SIGKILL);
	fclose(file);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

/* 0: go on; 1: done, `*code` to exit with. */
static int reap(struct keeper *keeper, int *code)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			return 0;
		if (pid != keeper->loop) {
			tell_reaped(keeper, pid, status);
			continue;
		}
		if (keeper->channel >= 0)
			read_channel(keeper);
		loop_gone(keeper);
		struct keeper_decision decision =
		    keeper_loop_ended(&keeper->deaths, status, now_ms());
		if (keeper->settings->told)
			keeper->settings->told(keeper->settings->context, &decision,
					       keeper->restores);
		if (decision.action == KEEPER_GIVE_UP)
			kill_children();
		if (decision.action != KEEPER_RESTORE) {
			*code = decision.exit_code;
			return 1;
		}
		keeper->restores++;
		if (start_loop(keeper) < 0) {
			*code = 128 + decision.signal;
			return 1;
		}
	}
}

static void forward(struct keeper *keeper, const struct signalfd_siginfo *info)
{
	/* A terminal's ^C reached the loop's process group already. */
	if (info->ssi_code == SI_KERNEL)
		return;
	if (keeper->loop > 0)
		kill(keeper->loop, (int)info->ssi_signo);
	else if (keeper->waiting_signal_count <
		 sizeof(keeper->waiting_signals) / sizeof(keeper->waiting_signals[0]))
		keeper->waiting_signals[keeper->waiting_signal_count++] = (int)info->ssi_signo;
}

int keeper_run(const struct keeper_settings *settings)
{
	struct keeper keeper = {.settings = settings, .channel = -1};
	keeper.deaths.window_ms = settings->deaths_window_ms;
	kept_records_init(&keeper.records);
	keeper.buffer = malloc(KEEPER_MESSAGE_MAX);
	sigset_t mask, old_mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&mask, forwarded[i]);
	/* Blocked before the first loop starts: it inherits the mask, and a
	 * signal meant for it waits until its signalfd reads it. */
	sigprocmask(SIG_BLOCK, &mask, &old_mask);
	int signals = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	int code = 1;
	if (!keeper.buffer || signals < 0 || start_loop(&keeper) < 0)
		goto out;
	for (;;) {
		bool watch_channel = keeper.channel >= 0 && !keeper.channel_hung;
		int extra = settings->readable ? settings->watched_fd : -1;
		short channel_events = POLLIN | (reaped_waiting(&keeper) ? POLLOUT : 0);
		struct pollfd watched[3] = {
		    {signals, POLLIN, 0},
		    {watch_channel ? keeper.channel : -1, channel_events, 0},
		    {extra, POLLIN, 0}};
		if (poll(watched, 3, -1) < 0 && errno != EINTR)
			break;
		if (extra >= 0 && watched[2].revents)
			settings->readable(settings->context, keeper.loop);
		if (watch_channel && (watched[1].revents & POLLOUT))
			send_reaped(&keeper);
		if (watch_channel && (watched[1].revents & ~POLLOUT)) {
			read_channel(&keeper);
			/* The loop is dying: its SIGCHLD follows. */
			keeper.channel_hung = (watched[1].revents & (POLLHUP | POLLERR)) != 0;
		}
		struct signalfd_siginfo info;
		while (read(signals, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
			if (info.ssi_signo != SIGCHLD)
				forward(&keeper, &info);
		}
		if (reap(&keeper, &code))
			break;
	}
out:
	if (keeper.channel >= 0)
		close(keeper.channel);
	if (signals >= 0)
		close(signals);
	kept_records_free(&keeper.records);
	free(keeper.buffer);
	free(keeper.reaped);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return code;
}
