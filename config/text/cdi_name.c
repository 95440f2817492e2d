#include "config/text/cdi_name.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_letter(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_alphanumeric(char c)
{
	return is_letter(c) || (c >= '0' && c <= '9');
}

/* One segment of `length` bytes: `what` names it in the message ("vendor",
 * "class", "device name"); `extra` is the punctuation allowed inside. */
static const char *segment_problem(const char *what, const char *text, size_t length,
				   bool must_start_with_letter, const char *extra, char *buffer,
				   size_t size)
{
	if (length == 0) {
		snprintf(buffer, size, "the %s is empty", what);
		return buffer;
	}
	if (must_start_with_letter ? !is_letter(text[0]) : !is_alphanumeric(text[0])) {
		snprintf(buffer, size, "the %s \"%.*s\" must start with a letter%s", what,
			 (int)length, text, must_start_with_letter ? "" : " or digit");
		return buffer;
	}
	for (size_t i = 1; i < length; i++) {
		char c = text[i];

		if (is_alphanumeric(c) || (c && strchr(extra, c)))
			continue;
		if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
			snprintf(buffer, size,
				 "the %s has the byte 0x%02x: use letters, digits and %s", what,
				 (unsigned char)c, extra);
		else
			snprintf(buffer, size,
				 "the %s \"%.*s\" has '%c': use letters, digits and \"%s\"", what,
				 (int)length, text, c, extra);
		return buffer;
	}
	if (!is_alphanumeric(text[length - 1])) {
		snprintf(buffer, size, "the %s \"%.*s\" must end with a letter or digit", what,
			 (int)length, text);
		return buffer;
	}
	return NULL;
}

static const char *kind_problem(const char *kind, size_t length, char *buffer, size_t size)
{
	const char *slash = memchr(kind, '/', length);
	const char *problem;

	if (!slash) {
		snprintf(buffer, size, "missing \"VENDOR/\" before the class \"%.*s\"", (int)length,
			 kind);
		return buffer;
	}
	problem =
	    segment_problem("vendor", kind, (size_t)(slash - kind), true, "_-.", buffer, size);
	if (problem)
		return problem;
	return segment_problem("class", slash + 1, length - (size_t)(slash - kind) - 1, true, "_-.",
			       buffer, size);
}

const char *cdi_kind_problem(const char *kind, char *buffer, size_t size)
{
	return kind_problem(kind, strlen(kind), buffer, size);
}

const char *cdi_device_name_problem(const char *name, char *buffer, size_t size)
{
	return segment_problem("device name", name, strlen(name), false, "_-.:", buffer, size);
}

const char *cdi_qualified_name_problem(const char *qualified, char *buffer, size_t size)
{
	const char *equals = strchr(qualified, '=');

	if (!equals) {
		snprintf(buffer, size,
			 "missing \"=NAME\" (write VENDOR/CLASS=NAME, as in "
			 "vendor.com/gpu=0)");
		return buffer;
	}
	if (kind_problem(qualified, (size_t)(equals - qualified), buffer, size))
		return buffer;
	return cdi_device_name_problem(equals + 1, buffer, size);
}
