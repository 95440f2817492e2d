#include "isolation/mountinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"

/* The next space-separated field of a line: [*at, end). */
static bool next_field(const char **at, const char *line_end, const char **start, size_t *length)
{
	const char *cursor = *at;
	while (cursor < line_end && *cursor == ' ')
		cursor++;
	if (cursor == line_end)
		return false;
	*start = cursor;
	while (cursor < line_end && *cursor != ' ')
		cursor++;
	*length = (size_t)(cursor - *start);
	*at = cursor;
	return true;
}

static bool parse_number(const char *text, size_t length, uint64_t *out)
{
	uint64_t value = 0;
	if (!length || length > 19)
		return false;
	for (size_t i = 0; i < length; i++) {
		if (text[i] < '0' || text[i] > '9')
			return false;
		value = value * 10 + (uint64_t)(text[i] - '0');
	}
	*out = value;
	return true;
}

/* The kernel escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *text, size_t length)
{
	char *out = xmalloc(length + 1), *to = out;
	for (size_t i = 0; i < length; i++) {
		if (text[i] == '\\' && i + 3 < length && text[i + 1] >= '0' && text[i + 1] <= '3' &&
		    text[i + 2] >= '0' && text[i + 2] <= '7' && text[i + 3] >= '0' &&
		    text[i + 3] <= '7') {
			*to++ = (char)((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
				       (text[i + 3] - '0'));
			i += 3;
			continue;
		}
		*to++ = text[i];
	}
	*to = '\0';
	return out;
}

static int parse_line(const char *line, const char *end, struct mountinfo_entry *entry)
{
	const char *at = line, *field;
	size_t length;
	memset(entry, 0, sizeof(*entry));
	if (!next_field(&at, end, &field, &length) || !parse_number(field, length, &entry->id) ||
	    !next_field(&at, end, &field, &length) ||
	    !parse_number(field, length, &entry->parent) ||
	    !next_field(&at, end, &field, &length) || /* major:minor */
	    !next_field(&at, end, &field, &length))   /* root: "net:[4026531840]" for nsfs */
		return -EINVAL;
	const char *root = field;
	size_t root_length = length;
	if (!next_field(&at, end, &field, &length) || field[0] != '/')
		return -EINVAL;
	const char *mount_point = field;
	size_t mount_point_length = length;
	if (!next_field(&at, end, &field, &length)) /* mount options */
		return -EINVAL;
	/* Optional fields up to "-": "shared:N", "master:N", ... */
	for (;;) {
		if (!next_field(&at, end, &field, &length))
			return -EINVAL;
		if (length == 1 && field[0] == '-')
			break;
		if (length > 7 && memcmp(field, "shared:", 7) == 0 &&
		    !parse_number(field + 7, length - 7, &entry->shared))
			return -EINVAL;
	}
	entry->root = unescape(root, root_length);
	entry->mount_point = unescape(mount_point, mount_point_length);
	return 0;
}

int mountinfo_parse(const char *text, size_t length, struct mountinfo *out)
{
	size_t capacity = 0;
	memset(out, 0, sizeof(*out));
	for (const char *line = text, *end = text + length; line < end;) {
		const char *line_end = memchr(line, '\n', (size_t)(end - line));
		if (!line_end)
			line_end = end;
		if (line_end > line) {
			if (out->count == capacity) {
				capacity = capacity ? capacity * 2 : 64;
				out->entries =
				    xreallocarray(out->entries, capacity, sizeof(*out->entries));
			}
			if (parse_line(line, line_end, &out->entries[out->count]) < 0) {
				mountinfo_free(out);
				return -EINVAL;
			}
			out->count++;
		}
		line = line_end + 1;
	}
	return 0;
}

int mountinfo_read(struct mountinfo *out)
{
	memset(out, 0, sizeof(*out));
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t size = 0, capacity = 64 * 1024;
	char *text = xmalloc(capacity);
	for (;;) {
		if (size == capacity) {
			capacity *= 2;
			text = xreallocarray(text, capacity, 1);
		}
		ssize_t got = read(fd, text + size, capacity - size);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int failure = -errno;
			close(fd);
			free(text);
			return failure;
		}
		if (got == 0)
			break;
		size += (size_t)got;
	}
	close(fd);
	int result = mountinfo_parse(text, size, out);
	free(text);
	return result;
}

void mountinfo_free(struct mountinfo *info)
{
	for (size_t i = 0; i < info->count; i++) {
		free(info->entries[i].root);
		free(info->entries[i].mount_point);
	}
	free(info->entries);
	memset(info, 0, sizeof(*info));
}

const struct mountinfo_entry *mountinfo_find(const struct mountinfo *info, uint64_t id)
{
	for (size_t i = 0; i < info->count; i++)
		if (info->entries[i].id == id)
			return &info->entries[i];
	return NULL;
}

const struct mountinfo_entry *mountinfo_find_mount_point(const struct mountinfo *info,
							 const char *mount_point)
{
	for (size_t i = info->count; i > 0; i--)
		if (strcmp(info->entries[i - 1].mount_point, mount_point) == 0)
			return &info->entries[i - 1];
	return NULL;
}

bool mountinfo_path_is_below(const char *path, const char *top)
{
	size_t length = strlen(top);
	while (length > 1 && top[length - 1] == '/')
		length--;
	if (length == 1 && top[0] == '/')
		return path[0] == '/';
	return strncmp(path, top, length) == 0 && (path[length] == '\0' || path[length] == '/');
}
