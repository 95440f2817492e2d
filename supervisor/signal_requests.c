/* Signals to corral in a config's run: who sent each (the kernel, a
 * process above corral's pid namespace, corral's parent, a task, anything
 * else corral started, or an operator), whether it is honoured
 * (pid1/signal_judgement.h: a task's signal is a request, granted by its
 * `control:` list as a control connection is), and what corral says and
 * does. Refusals are said once per sender per interval (base/log_throttle.h).
 * One-command mode forwards signals instead (pid1/one_command.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/log.h"
#include "base/units.h"
#include "supervisor/control/control_peer.h"
#include "supervisor/pid1/signal_exposure.h"
#include "supervisor/pid1/signal_judgement.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/upgrade.h"

#define SIGNAL_REFUSALS_INTERVAL_MS 10000

void signal_requests_prepare(struct supervisor *supervisor)
{
	throttled_log_init(&supervisor->signal_refusals, SIGNAL_REFUSALS_INTERVAL_MS, "refused",
			   "signal");
}

void signal_requests_open(struct supervisor *supervisor)
{
	control_peer_rules_init(&supervisor->signal_peer_rules,
				supervisor->cgroups.enabled ? supervisor->cgroups.proc_root_path
							    : NULL);
	throttled_log_start(&supervisor->signal_refusals, supervisor->loop);
}

void signal_requests_close(struct supervisor *supervisor)
{
	throttled_log_stop(&supervisor->signal_refusals);
	control_peer_rules_free(&supervisor->signal_peer_rules);
}

static const struct task *task_named(const struct supervisor *supervisor, const char *name)
{
	for (size_t g = 0; g < supervisor->group_count; g++)
		for (size_t t = 0; t < supervisor->groups[g]->task_count; t++) {
			const struct task *task = supervisor->groups[g]->tasks[t];
			if (!task->removed && strcmp(task->config->full_name, name) == 0)
				return task;
		}
	return NULL;
}

/* Some isolated task could send corral a signal at all: a sender that is
 * gone may have been one. (A task without isolation keeps corral's
 * capabilities: a signal is the least it could do, so it does not make
 * every operator's short-lived `kill` suspect.) */
static bool tasks_can_signal(const struct supervisor *supervisor)
{
	for (size_t g = 0; g < supervisor->group_count; g++)
		for (size_t t = 0; t < supervisor->groups[g]->task_count; t++) {
			const struct task *task = supervisor->groups[g]->tasks[t];
			if (!task->removed &&
			    signal_exposure_confined_task_can_signal(task->config, geteuid()))
				return true;
		}
	return false;
}

/* Who sent it. A task is told by its cgroup (or by descent from corral)
 * through a pidfd taken now, as a control connection's peer is. A sender
 * that exited and was reaped before this look is "gone"; a zombie still
 * shows its cgroup. */
static void find_sender(struct supervisor *supervisor, const struct signalfd_siginfo *info,
			struct signal_sender *sender, struct control_peer *peer)
{
	pid_t pid = (pid_t)info->ssi_pid;
	*sender = (struct signal_sender){.pid = pid};
	if (pid == 0)
		sender->kind = SIGNAL_FROM_KERNEL_OR_ABOVE;
	else if (pid == getpid())
		sender->kind = SIGNAL_FROM_CORRAL;
	else if (pid == getppid())
		sender->kind = SIGNAL_FROM_PARENT;
	else {
		control_peer_identify_pid(pid, &supervisor->signal_peer_rules, peer);
		if (peer->task[0]) {
			sender->kind = SIGNAL_FROM_TASK;
			sender->task = peer->task;
		} else if (peer->descends_from_corral)
			sender->kind = SIGNAL_FROM_STARTED;
		else if (peer->gone)
			sender->kind = SIGNAL_FROM_GONE;
		else
			sender->kind = SIGNAL_FROM_OTHER;
	}
}

/* Who a throttled line is counted against: a task by its name; what corral
 * started, and senders gone before corral looked, each as one. */
static void throttle_source(const struct signal_sender *sender, char *buffer, size_t size)
{
	if (sender->kind == SIGNAL_FROM_TASK)
		snprintf(buffer, size, "task %s", sender->task);
	else if (sender->kind == SIGNAL_FROM_STARTED)
		snprintf(buffer, size, "processes corral started");
	else
		snprintf(buffer, size, "senders that exited before corral looked");
}

/* true: say it now; false: counted into the sender's summary. */
static bool say_now(struct supervisor *supervisor, const struct signal_sender *sender,
		    const char *why)
{
	char source[LOG_THROTTLE_SOURCE_MAX];
	throttle_source(sender, source, sizeof(source));
	return throttled_log_note(&supervisor->signal_refusals, source, why);
}

static const char *right_words(unsigned right)
{
	switch (right) {
	case CONTROL_RIGHT_SHUTDOWN:
		return "a shutdown";
	case CONTROL_RIGHT_RELOAD:
		return "a reload";
	default:
		return "an upgrade";
	}
}

static void refuse(struct supervisor *supervisor, const struct signal_sender *sender,
		   const char *signal, enum signal_verdict verdict, unsigned right,
		   unsigned granted_rights)
{
	char error[512], described[256];
	signal_judgement_describe_sender(sender, described, sizeof(described));
	const char *right_name = "";
	for (unsigned i = 0; i < CONTROL_RIGHT_COUNT; i++)
		if (right == 1u << i)
			right_name = control_right_name(i);
	switch (verdict) {
	case SIGNAL_REFUSE_NOT_GRANTED: {
		char granted[256];
		control_rights_describe(granted_rights, granted, sizeof(granted));
		snprintf(error, sizeof(error),
			 "%s asks for %s, and a task's signal to corral is a request its "
			 "control: list must grant (%s grants %s, not %s)",
			 signal, right_words(right), sender->task, granted, right_name);
		break;
	}
	case SIGNAL_REFUSE_STARTED:
		snprintf(error, sizeof(error),
			 "%s asks for %s, and what corral starts (a hook, a probe, a task's "
			 "process outside its cgroup) is never an operator",
			 signal, right_words(right));
		break;
	default:
		snprintf(
		    error, sizeof(error),
		    "%s asks for %s, and its sender exited before corral could tell whether "
		    "it was a task (an isolated task can signal corral); send it from a process "
		    "that outlives the signal, or use the control socket",
		    signal, right_words(right));
		break;
	}
	if (say_now(supervisor, sender, error))
		log_message("%s from %s refused: %s", signal, described, error);
}

static void act(struct supervisor *supervisor, int signal_number, const char *signal,
		const char *described)
{
	switch (signal_number) {
	case SIGTERM:
	case SIGINT:
	case SIGQUIT:
		log_message("%s from %s: a shutdown", signal, described);
		supervisor_begin_shutdown(supervisor, signal, signal);
		return;
	case SIGHUP:
		log_message("%s from %s: a reload of the running config, as `corral reload`",
			    signal, described);
		supervisor_reload_on_hangup(supervisor);
		return;
	case SIGUSR2: {
		/* As `corral upgrade` with corral's own binary. */
		char error[1024];
		log_message("%s from %s: an upgrade to corral's own binary, as `corral upgrade`",
			    signal, described);
		/* The binary's check runs on in the loop; how it ends is said
		 * by upgrade.c. */
		if (upgrade_run(supervisor, NULL, "", error, sizeof(error)) < 0)
			log_message("upgrade asked by %s from %s: %s; corral runs on as it was",
				    signal, described, error);
		return;
	}
	default:
		log_message("%s from %s: ignored: it asks corral for nothing (SIGHUP reloads, "
			    "SIGUSR2 upgrades, SIGTERM, SIGINT and SIGQUIT shut down)",
			    signal, described);
		return;
	}
}

void signal_requests_handle(struct supervisor *supervisor, const struct signalfd_siginfo *info)
{
	int signal_number = (int)info->ssi_signo;
	const char *signal = signal_name(signal_number);
	struct signal_sender sender;
	struct control_peer peer;
	find_sender(supervisor, info, &sender, &peer);
	unsigned rights = 0;
	if (sender.kind == SIGNAL_FROM_TASK) {
		const struct task *task = task_named(supervisor, sender.task);
		rights = task ? task->config->control_rights : 0;
	}
	bool exposed = sender.kind == SIGNAL_FROM_GONE && tasks_can_signal(supervisor);
	enum signal_verdict verdict =
	    signal_judgement_decide(&sender, signal_number, rights, exposed);
	if (verdict != SIGNAL_HONOUR) {
		refuse(supervisor, &sender, signal, verdict, signal_judgement_right(signal_number),
		       rights);
		return;
	}
	char described[256];
	signal_judgement_describe_sender(&sender, described, sizeof(described));
	/* A signal that asks for nothing, from what may be a task, is said as
	 * seldom as a refusal: a task may send it in a loop. */
	bool may_be_task = sender.kind == SIGNAL_FROM_TASK || sender.kind == SIGNAL_FROM_STARTED ||
			   sender.kind == SIGNAL_FROM_GONE;
	if (!signal_judgement_right(signal_number) && may_be_task) {
		char error[160];
		snprintf(error, sizeof(error), "%s asks corral for nothing: ignored", signal);
		if (!say_now(supervisor, &sender, error))
			return;
	}
	act(supervisor, signal_number, signal, described);
}
