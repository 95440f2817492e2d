#include "base/paths.h"

#include <string.h>

#include "base/xmalloc.h"

bool path_has_parent_component(const char *path)
{
	for (const char *part = path; *part; part += strcspn(part, "/")) {
		part += strspn(part, "/");
		if (strncmp(part, "..", 2) == 0 && (part[2] == '/' || part[2] == '\0'))
			return true;
	}
	return false;
}

char *path_clean(const char *path)
{
	size_t length = strlen(path);
	char *clean = xmalloc(length + 2);
	bool rooted = path[0] == '/';
	size_t used = 0, floor = 0; /* `..` may not take away what is below floor */
	if (rooted)
		clean[used++] = '/', floor = 1;
	for (const char *part = path; *part;) {
		part += strspn(part, "/");
		size_t part_length = strcspn(part, "/");
		if (part_length == 0)
			break;
		if (part_length == 1 && part[0] == '.') {
			/* nothing */
		} else if (part_length == 2 && part[0] == '.' && part[1] == '.') {
			if (used > floor) {
				/* Back to the "/" before the last part (or the floor). */
				while (used > floor && clean[used - 1] != '/')
					used--;
				if (used > floor)
					used--; /* the separator */
			} else if (!rooted) {
				/* A relative path's leading ".." stay. */
				if (used > 0)
					clean[used++] = '/';
				memcpy(clean + used, "..", 2);
				used += 2;
				floor = used;
			}
		} else {
			if (used > 0 && clean[used - 1] != '/')
				clean[used++] = '/';
			memcpy(clean + used, part, part_length);
			used += part_length;
		}
		part += part_length;
	}
	if (used == 0)
		clean[used++] = '.';
	clean[used] = '\0';
	return clean;
}
