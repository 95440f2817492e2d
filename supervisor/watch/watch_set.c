#include "supervisor/watch/watch_set.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "supervisor/tasks/group.h"
#include "supervisor/watch/watch_action.h"
#include "supervisor/watch/watch_chain.h"
#include "supervisor/watch/watch_target.h"

/* One entry of one task's `watch:` list. */
struct watch_entry {
	struct watch_set *set;
	struct task *task;
	size_t index;               /* in the task's list */
	struct watch_config config; /* a copy: the task's definition may be swapped */
	struct watch_target *targets;
	size_t target_count;
	struct loop_timer debounce;
	/* Since the timer was armed: the first path that changed, and
	 * whether others did too. */
	char *changed;
	bool others_changed;
	bool failure_said; /* a path could not be watched: said once until it can */
};

static void on_debounce(struct loop_timer *timer);

/* ---- the inotify fd in the loop ---- */

static void on_inotify(struct loop_watch *watch, uint32_t events);

/* After watches were added or dropped: the fd follows into the loop, or
 * out of it once nothing is watched. */
static void follow_fd(struct watch_set *set)
{
	struct loop *loop = set->services->loop;
	if (set->dirs.count == 0) {
		if (set->inotify.registered)
			loop_watch_remove(loop, &set->inotify);
		watch_dirs_close_if_unused(&set->dirs);
		set->inotify.fd = -1;
		return;
	}
	if (set->inotify.registered)
		return;
	set->inotify = (struct loop_watch){.fd = set->dirs.fd, .callback = on_inotify, .data = set};
	int result = loop_watch_add(loop, &set->inotify, EPOLLIN);
	if (result < 0)
		log_message("watch: cannot add the inotify fd to the event loop: %s",
			    strerror(-result));
}

/* ---- entries ---- */

/* `then`: what becomes of the path's changes. */
static void say_failure(struct watch_entry *entry, const char *error, const char *then)
{
	if (entry->failure_said)
		return;
	entry->failure_said = true;
	char *message = xasprintf("watch: %s; %s", error, then);
	task_note_event(entry->task, TASK_EVENT_WATCH_FAILED, message);
	free(message);
}

/* Something changed: remembered for the message, and the timer (re)armed,
 * so that the action comes once the changes have stopped for `debounce`. */
static void note_change(struct watch_entry *entry, const char *path)
{
	if (!entry->changed)
		entry->changed = xstrdup(path);
	else if (strcmp(entry->changed, path) != 0)
		entry->others_changed = true;
	loop_timer_arm(entry->set->services->loop, &entry->debounce,
		       loop_now_ms() + entry->config.debounce_ms);
}

static void resolve(struct watch_entry *entry, struct watch_target *target)
{
	char error[PATH_MAX + 256];
	int result = watch_target_resolve(target, &entry->set->dirs, error, sizeof(error));
	if (result < 0)
		say_failure(entry, error, "its changes are not seen (until a reload)");
	else if (result > 0)
		note_change(entry, target->path);
	if (result >= 0 && target->chain_cut) {
		snprintf(error, sizeof(error),
			 "%s goes through more than %d symlinks (a loop?) or past PATH_MAX: the "
			 "links up to there are watched, what they lead to is not",
			 target->path, WATCH_CHAIN_MAX_LINKS);
		/* The links met are watched: mending one is seen. */
		say_failure(entry, error, "a link re-pointed or removed on the way is seen");
	}
}

static struct watch_entry *entry_make(struct watch_set *set, struct task *task, size_t index,
				      const struct watch_config *config)
{
	struct watch_entry *entry = xcalloc(1, sizeof(*entry));
	entry->set = set;
	entry->task = task;
	entry->index = index;
	entry->config = *config;
	entry->config.paths = xcalloc(config->path_count + 1, sizeof(char *));
	for (size_t i = 0; i < config->path_count; i++)
		entry->config.paths[i] = xstrdup(config->paths[i]);
	loop_timer_init(&entry->debounce, on_debounce, entry);
	entry->targets = xcalloc(config->path_count, sizeof(*entry->targets));
	entry->target_count = config->path_count;
	for (size_t i = 0; i < entry->target_count; i++) {
		watch_target_init(&entry->targets[i], config->paths[i]);
		resolve(entry, &entry->targets[i]);
	}
	return entry;
}

static void entry_free(struct watch_entry *entry)
{
	loop_timer_cancel(entry->set->services->loop, &entry->debounce);
	for (size_t i = 0; i < entry->target_count; i++)
		watch_target_free(&entry->targets[i], &entry->set->dirs);
	free(entry->targets);
	string_vector_free(entry->config.paths);
	free(entry->changed);
	free(entry);
}

/* A kept entry at a reload: the paths it could not watch are tried again
 * (a limit raised meanwhile), and a failure said again. */
static void retry_failed(struct watch_entry *entry)
{
	if (!entry->failure_said)
		return;
	entry->failure_said = false;
	for (size_t i = 0; i < entry->target_count; i++)
		if (entry->targets[i].dir_wd < 0)
			resolve(entry, &entry->targets[i]);
}

static bool same_config(const struct watch_config *a, const struct watch_config *b)
{
	if (a->path_count != b->path_count || a->action != b->action || a->signal != b->signal ||
	    a->debounce_ms != b->debounce_ms)
		return false;
	for (size_t i = 0; i < a->path_count; i++)
		if (strcmp(a->paths[i], b->paths[i]) != 0)
			return false;
	return true;
}

/* The debounce is over: the action, with what changed. The entry may be
 * gone after a reload, so nothing of it is used once the action runs. */
static void on_debounce(struct loop_timer *timer)
{
	struct watch_entry *entry = timer->data;
	char what[PATH_MAX + 64];
	snprintf(what, sizeof(what), "%s%s changed", entry->changed ? entry->changed : "?",
		 entry->others_changed ? " and more" : "");
	free(entry->changed);
	entry->changed = NULL;
	entry->others_changed = false;
	struct watch_set *set = entry->set;
	watch_action_run(entry->task, &entry->config, what, set->reload, set->reload_context);
}

/* ---- events ---- */

static void dispatch(struct watch_set *set, const struct inotify_event *event)
{
	if (event->mask & IN_Q_OVERFLOW) {
		/* Events were lost: whatever they were, treat them as a change. */
		log_message("watch: inotify's queue overflowed: every watched path is taken as "
			    "changed");
		for (size_t e = 0; e < set->entry_count; e++) {
			struct watch_entry *entry = set->entries[e];
			for (size_t t = 0; t < entry->target_count; t++) {
				note_change(entry, entry->targets[t].path);
				resolve(entry, &entry->targets[t]);
			}
		}
		return;
	}
	const char *name = event->len ? event->name : NULL;
	for (size_t e = 0; e < set->entry_count; e++) {
		struct watch_entry *entry = set->entries[e];
		for (size_t t = 0; t < entry->target_count; t++) {
			struct watch_target *target = &entry->targets[t];
			char changed[PATH_MAX + NAME_MAX + 2];
			unsigned verdict = watch_target_event(target, event->wd, event->mask, name,
							      changed, sizeof(changed));
			if (verdict & WATCH_CHANGED)
				note_change(entry, changed);
			if (verdict & WATCH_RESOLVE)
				resolve(entry, target);
		}
	}
	/* After the targets: one that still held it saw it go first. */
	if (event->mask & IN_IGNORED)
		watch_dirs_gone(&set->dirs, event->wd);
}

static void on_inotify(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	struct watch_set *set = watch->data;
	char buffer[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t length = read(set->dirs.fd, buffer, sizeof(buffer));
		if (length <= 0) {
			if (length < 0 && errno != EAGAIN && errno != EINTR)
				log_message("watch: reading inotify events: %s", strerror(errno));
			break;
		}
		for (char *cursor = buffer; cursor < buffer + length;) {
			const struct inotify_event *event = (const struct inotify_event *)cursor;
			dispatch(set, event);
			cursor += sizeof(*event) + event->len;
		}
	}
	follow_fd(set);
}

/* ---- the set ---- */

void watch_set_init(struct watch_set *set, struct services *services, void (*reload)(void *context),
		    void *reload_context)
{
	*set = (struct watch_set){
	    .services = services,
	    .inotify = {.fd = -1},
	    .reload = reload,
	    .reload_context = reload_context,
	};
	watch_dirs_init(&set->dirs);
}

static struct watch_entry *take_entry(struct watch_set *set, const struct task *task, size_t index)
{
	for (size_t i = 0; i < set->entry_count; i++) {
		struct watch_entry *entry = set->entries[i];
		if (entry && entry->task == task && entry->index == index) {
			set->entries[i] = NULL;
			return entry;
		}
	}
	return NULL;
}

void watch_set_sync(struct watch_set *set)
{
	/* Entries kept or made, in task order; those left are freed. */
	struct watch_entry **kept = NULL;
	size_t kept_count = 0;
	struct services *services = set->services;
	for (size_t g = 0; g < services->group_count; g++) {
		struct group *group = services->groups[g];
		for (size_t t = 0; !group->removed && t < group->task_count; t++) {
			struct task *task = group->tasks[t];
			const struct task_config *definition =
			    task->next_config ? task->next_config : task->config;
			for (size_t w = 0; !task->removed && w < definition->watch_count; w++) {
				const struct watch_config *config = &definition->watches[w];
				struct watch_entry *entry = take_entry(set, task, w);
				if (!entry || !same_config(&entry->config, config)) {
					/* Made before the old one goes: a directory
					 * both watch keeps its inotify watch. */
					struct watch_entry *made = entry_make(set, task, w, config);
					if (entry)
						entry_free(entry);
					entry = made;
				} else {
					retry_failed(entry);
				}
				kept = xreallocarray(kept, kept_count + 1, sizeof(*kept));
				kept[kept_count++] = entry;
			}
		}
	}
	for (size_t i = 0; i < set->entry_count; i++)
		if (set->entries[i])
			entry_free(set->entries[i]);
	free(set->entries);
	set->entries = kept;
	set->entry_count = kept_count;
	watch_dirs_drop_strays(&set->dirs);
	follow_fd(set);
}

void watch_set_adopt(struct watch_set *set, int fd)
{
	watch_dirs_adopt(&set->dirs, fd);
}

void watch_set_close(struct watch_set *set)
{
	for (size_t i = 0; i < set->entry_count; i++)
		entry_free(set->entries[i]);
	free(set->entries);
	set->entries = NULL;
	set->entry_count = 0;
	follow_fd(set);
}
