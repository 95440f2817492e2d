#include "supervisor/watch/watch_chain.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"

static void add(struct watch_chain *chain, const char *directory, const char *name, bool link)
{
	const char *shown = *directory ? directory : "/";
	for (size_t i = 0; i < chain->count; i++)
		if (strcmp(chain->hops[i].directory, shown) == 0 &&
		    strcmp(chain->hops[i].name, name) == 0)
			return; /* a loop comes back to a link already met */
	chain->hops = xreallocarray(chain->hops, chain->count + 1, sizeof(*chain->hops));
	chain->hops[chain->count++] = (struct watch_hop){
	    .directory = xstrdup(shown),
	    .name = xstrdup(name),
	    .link = link,
	};
	chain->links += link;
}

/* The path ended on a directory reached by "..", "." or a link to it:
 * that directory, named in its parent. */
static void end_at_directory(struct watch_chain *chain, char *reached)
{
	char *slash = strrchr(reached, '/');
	if (!slash || !slash[1])
		return; /* "/" itself: nothing holds it */
	*slash = '\0';
	add(chain, reached, slash + 1, false);
}

void watch_chain_walk(const char *path, struct watch_chain *chain)
{
	*chain = (struct watch_chain){0};
	/* The directory reached so far, no symlink in it ("" is "/"), and
	 * what is left to walk. */
	char reached[PATH_MAX] = "";
	char rest[2 * PATH_MAX];
	if ((size_t)snprintf(rest, sizeof(rest), "%s", path) >= sizeof(rest)) {
		chain->cut = true;
		return;
	}
	size_t followed = 0;
	const char *cursor = rest;
	for (;;) {
		while (*cursor == '/')
			cursor++;
		if (!*cursor)
			break;
		size_t length = strcspn(cursor, "/");
		char name[NAME_MAX + 1], full[PATH_MAX];
		if (length > NAME_MAX) {
			chain->cut = true;
			return;
		}
		memcpy(name, cursor, length);
		name[length] = '\0';
		cursor += length;
		bool last = !cursor[strspn(cursor, "/")];
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			char *slash = strrchr(reached, '/');
			if (slash)
				*slash = '\0';
			continue;
		}
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", reached, name) >= sizeof(full)) {
			chain->cut = true;
			return;
		}
		struct stat status;
		if (lstat(full, &status) < 0 ||
		    (!last && !S_ISDIR(status.st_mode) && !S_ISLNK(status.st_mode))) {
			/* Missing (or no directory where one is needed): watched
			 * for when it appears. */
			add(chain, reached, name, false);
			return;
		}
		if (!S_ISLNK(status.st_mode)) {
			if (last) {
				add(chain, reached, name, false);
				return;
			}
			memcpy(reached, full, strlen(full) + 1);
			continue;
		}
		add(chain, reached, name, true);
		char target[PATH_MAX], next[2 * PATH_MAX];
		ssize_t target_length = readlink(full, target, sizeof(target) - 1);
		if (target_length <= 0)
			return; /* gone since the lstat: its directory's watch sees it */
		target[target_length] = '\0';
		if (++followed > WATCH_CHAIN_MAX_LINKS ||
		    (size_t)snprintf(next, sizeof(next), "%s/%s", target, cursor) >= sizeof(next)) {
			chain->cut = true;
			return;
		}
		/* The link's text, from the directory that holds the link (or
		 * from "/"), then what came after the link. */
		memcpy(rest, next, strlen(next) + 1);
		cursor = rest;
		if (target[0] == '/')
			reached[0] = '\0';
	}
	end_at_directory(chain, reached);
}

void watch_chain_free(struct watch_chain *chain)
{
	for (size_t i = 0; i < chain->count; i++) {
		free(chain->hops[i].directory);
		free(chain->hops[i].name);
	}
	free(chain->hops);
	*chain = (struct watch_chain){0};
}
