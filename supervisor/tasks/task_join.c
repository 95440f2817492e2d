#include "supervisor/tasks/task_join.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "config/text/ids.h"
#include "supervisor/tasks/task.h"

/* What the request points at while the spawn runs. */
struct join_storage {
	char **envp; /* strings too */
	gid_t *groups;
	char **candidates;
	struct spawn_join join;
	struct spawn_isolation isolation;
	int cgroup_fd; /* the task's leaf, opened here; -1 */
};

static void storage_free(struct join_storage *storage)
{
	for (char **string = storage->envp; string && *string; string++)
		free(*string);
	free(storage->envp);
	free(storage->groups);
	spawn_join_candidates_free(storage->candidates);
	if (storage->join.pidfd >= 0)
		close(storage->join.pidfd);
	if (storage->cgroup_fd >= 0)
		close(storage->cgroup_fd);
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
 * databases, or numbers (config/text/ids.h: in range, never cut to 32 bits). */
static int resolve_user(const char *text, struct spawn_request *spawn, char *error, size_t size)
{
	char name[256];
	snprintf(name, sizeof(name), "%s", text);
	if (id_spec_check(name, error, size) < 0)
		return -EINVAL;
	char *colon = strchr(name, ':');
	if (colon)
		*colon = '\0';
	uint32_t uid;
	struct passwd *entry = NULL;
	if (id_text_read(name, strlen(name), &uid) != ID_TEXT_NUMBER) {
		entry = getpwnam(name);
		if (!entry) {
			snprintf(error, size, "user \"%s\": no such user", name);
			return -ENOENT;
		}
		uid = entry->pw_uid;
	}
	spawn->change_ids = true;
	spawn->uid = (uid_t)uid;
	spawn->gid = entry ? entry->pw_gid : (gid_t)uid;
	spawn->groups = NULL;
	spawn->group_count = 0;
	if (colon) {
		uint32_t gid;
		if (id_text_read(colon + 1, strlen(colon + 1), &gid) != ID_TEXT_NUMBER) {
			struct group *group = getgrnam(colon + 1);
			if (!group) {
				snprintf(error, size, "group \"%s\": no such group", colon + 1);
				return -ENOENT;
			}
			gid = group->gr_gid;
		}
		spawn->gid = (gid_t)gid;
	}
	return 0;
}

/* Which namespaces of the task's process are not corral's own: joining
 * one's own user namespace is refused (EINVAL), and the others cost. */
static unsigned long own_namespaces(pid_t pid)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} kinds[] = {{"mnt", CLONE_NEWNS},   {"uts", CLONE_NEWUTS}, {"ipc", CLONE_NEWIPC},
		     {"net", CLONE_NEWNET},  {"pid", CLONE_NEWPID}, {"cgroup", CLONE_NEWCGROUP},
		     {"user", CLONE_NEWUSER}};
	unsigned long flags = 0;
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

/* The task's limits and privileges, none of what makes namespaces: the
 * process joins the task's. */
static void take_isolation(const struct task *task, struct join_storage *storage)
{
	storage->isolation = (struct spawn_isolation){.umask = -1};
	const struct task_isolation *isolation = task->isolation;
	if (!isolation)
		return;
	storage->isolation.umask = isolation->spawn.umask;
	storage->isolation.capabilities = isolation->spawn.capabilities;
	storage->isolation.no_new_privileges = isolation->spawn.no_new_privileges;
	storage->isolation.seccomp = isolation->spawn.seccomp;
	/* A task in a user namespace has its limits set by corral
	 * (task_isolation.h, parent_rlimits), not by its spawn. */
	bool by_parent = isolation->parent_rlimit_count > 0;
	storage->join.rlimits = by_parent ? isolation->parent_rlimits : isolation->spawn.rlimits;
	storage->join.rlimit_count =
	    by_parent ? isolation->parent_rlimit_count : isolation->spawn.rlimit_count;
}

/* The request, but for the ids (the caller's, then -u) and the fds. */
static int prepare(struct spawn_request *spawn, struct join_storage *storage,
		   const struct task *task, const struct task_join_request *request, char *error,
		   size_t size)
{
	pid_t pid = task_command_pid(task);
	storage->envp = environment(task, request->env);
	storage->candidates = spawn_join_executable_candidates(request->argv[0], storage->envp);
	storage->join.executable_candidates = storage->candidates;
	take_isolation(task, storage);
	storage->join.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (storage->join.pidfd < 0) {
		int failure = -errno;
		snprintf(error, size, "the task's process %d: %s", (int)pid, strerror(-failure));
		return failure;
	}
	storage->join.namespaces = own_namespaces(pid);
	spawn->envp = storage->envp;
	spawn->isolation = &storage->isolation;
	spawn->join = &storage->join;
	if (request->cgroup_fd >= 0) {
		spawn->into_cgroup = true;
		spawn->cgroup_fd = request->cgroup_fd;
	} else if (task_cgroup_exists(&task->cgroup)) {
		storage->cgroup_fd = task_cgroup_open_dir(&task->cgroup);
		spawn->into_cgroup = storage->cgroup_fd >= 0;
		spawn->cgroup_fd = storage->cgroup_fd;
	}
	spawn->cgroup_v1_join = task->cgroup.v1_count ? task->cgroup.v1_join_paths : NULL;
	return 0;
}

int task_join_spawn(struct task *task, const struct task_join_request *request,
		    struct task_join *join, struct spawn_result *result, char *error,
		    size_t error_size)
{
	const char *cwd = request->cwd ? request->cwd : task->config->cwd;
	*join = (struct task_join){.command = xstrdup(request->argv[0]),
				   .cwd = cwd ? xstrdup(cwd) : NULL};
	struct spawn_slots *slots = task->services->spawn_slots;
	struct spawn_request *spawn = &join->names;
	*spawn = (struct spawn_request){
	    .executable = join->command,
	    .argv = request->argv,
	    .cwd = join->cwd,
	    .change_ids = task->plan.change_ids,
	    .keep_groups = task->plan.keep_groups,
	    .uid = task->plan.uid,
	    .gid = task->plan.gid,
	    .groups = task->plan.groups,
	    .group_count = task->plan.group_count,
	    .output_fd = request->fd_count > 1 ? request->fds[1] : slots->devnull_fd,
	    .separate_stderr = true,
	    .stderr_fd = request->fd_count > 2 ? request->fds[2] : slots->devnull_fd,
	    .take_terminal = request->take_terminal,
	    .cgroup_fd = -1,
	    .notify_target = -1,
	    .oom_score_adj = task->plan.oom_score_adj,
	    .netns_fd = -1,
	};
	struct join_storage storage = {.join = {.pidfd = -1, .stdin_fd = -1}, .cgroup_fd = -1};
	if (request->fd_count > 0)
		storage.join.stdin_fd = request->fds[0];
	int outcome = -1;
	if (request->user && resolve_user(request->user, spawn, error, error_size) < 0)
		goto out;
	if (prepare(spawn, &storage, task, request, error, error_size) < 0)
		goto out;
	int spawned = spawn_process(slots, spawn, result);
	if (spawned < 0) {
		snprintf(error, error_size, "cannot enter the task: %s", result->message);
		goto out;
	}
	outcome = 0;
out:
	storage_free(&storage);
	/* What the spawn alone needed is gone: only the names stay. */
	spawn->argv = NULL;
	spawn->envp = NULL;
	spawn->groups = NULL;
	spawn->isolation = NULL;
	spawn->join = NULL;
	if (outcome < 0)
		task_join_release(join);
	return outcome;
}

bool task_join_read_failure(const struct task_join *join, int error_fd, char *message, size_t size)
{
	struct spawn_failure failure;
	if (spawn_read_failure(error_fd, &failure) != 1)
		return false;
	spawn_failure_describe(&join->names, &failure, message, size);
	return true;
}

void task_join_release(struct task_join *join)
{
	free(join->command);
	free(join->cwd);
	*join = (struct task_join){0};
}
