/* Who is at the other end of a control connection, beyond its uid: a
 * task, or any process corral started or that descends from one (a hook,
 * a probe, a task's child in whatever namespaces it made), is never an
 * operator (docs/control-protocol.md, "Who may connect").
 *
 * Descent, not namespaces, is the rule: a task cannot leave it (an orphan
 * is reparented to corral, the subreaper), while an operator may well sit
 * in other namespaces than corral's (corral under systemd's PrivateTmp=
 * or ProtectSystem= has a mount namespace of its own; `podman exec` and
 * `kubectl exec` join corral's, but their parent is outside it).
 *
 * The process that connected is held by a pidfd (SO_PEERPIDFD) while its
 * /proc entries are read, and must still be alive afterwards: a pid that
 * died and was reused meanwhile is never taken for it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Where corral's tasks' cgroups are, and corral's own pid: read once when
 * the socket opens. */
struct control_peer_rules {
	/* The task cgroups' root as /proc/PID/cgroup shows it (see
	 * cgroup_tree.proc_root_path); NULL when tasks have no cgroups. */
	char *task_cgroup_root;
	pid_t corral_pid;
};

void control_peer_rules_init(struct control_peer_rules *rules, const char *task_cgroup_root);
void control_peer_rules_free(struct control_peer_rules *rules);

struct control_peer {
	struct ucred credentials;
	/* pid 0: the peer is in a pid namespace above corral's (the host,
	 * for a corral in a container). Tasks never are: their namespaces
	 * are made below corral's. */
	bool above_corral;
	/* It could not be looked at (it exited first, or no pidfd could be
	 * had): it cannot be told from a task, so it is not let in. */
	bool gone;
	/* "web/app" when its cgroup is a task's (or below one), else "". */
	char task[160];
	/* corral is among its ancestors: a task's process (even without a
	 * cgroup, which gives `task`), a hook's or a probe's. */
	bool descends_from_corral;
};

/* Fills `peer` for the connection `fd`. -errno when its credentials
 * cannot be read at all. */
int control_peer_identify(int fd, const struct control_peer_rules *rules,
			  struct control_peer *peer);

/* The same for the process `pid` with no connection (the sender of a
 * signal): what a pidfd of it, taken now, shows; `gone` when it has
 * exited. Its uid is not read (credentials.uid stays 0). */
void control_peer_identify_pid(pid_t pid, const struct control_peer_rules *rules,
			       struct control_peer *peer);

/* A task, or anything corral started: never an operator. */
static inline bool control_peer_is_confined(const struct control_peer *peer)
{
	return peer->task[0] || peer->descends_from_corral;
}

/* Pure, for the tests: the parent pid in a /proc/PID/stat text (the field
 * after the command name, which may itself hold spaces and parentheses);
 * -1 when the text is not one. */
pid_t control_peer_stat_parent(const char *text);

/* Pure, for the tests: the v2 path ("0::PATH" line) of a /proc/PID/cgroup
 * text, into `path`; false when there is none. */
bool control_peer_v2_cgroup(const char *text, char *path, size_t size);

/* Pure: "GROUP/TASK" when `path` is below `root`'s group and task
 * cgroups (root/GROUP/TASK[/...]; "GROUP" for root/GROUP itself), not
 * corral's own root/supervisor nor systemd's root/.control (a delegated
 * unit's ExecReload= and other control processes). */
bool control_peer_task_of_cgroup(const char *root, const char *path, char *task, size_t size);
