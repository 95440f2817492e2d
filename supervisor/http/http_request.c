#include "supervisor/http/http_request.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* RFC 9110's tchar: what a method or a field name is made of. */
static bool is_token_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static size_t skip_empty_lines(const char *buffer, size_t length)
{
	size_t at = 0;
	while (at < length && (buffer[at] == '\n' ||
			       (buffer[at] == '\r' && at + 1 < length && buffer[at + 1] == '\n')))
		at += buffer[at] == '\r' ? 2 : 1;
	return at;
}

size_t http_head_end(const char *buffer, size_t length, size_t *scanned)
{
	size_t at = skip_empty_lines(buffer, length);
	if (*scanned > at)
		at = *scanned;
	for (; at < length; at++) {
		if (buffer[at] != '\n')
			continue;
		/* A line ended: the head ends if the next one is empty. */
		if (at + 1 == length || (buffer[at + 1] == '\r' && at + 2 == length)) {
			*scanned = at; /* undecided: look again with more */
			return 0;
		}
		if (buffer[at + 1] == '\n')
			return at + 2;
		if (buffer[at + 1] == '\r' && buffer[at + 2] == '\n')
			return at + 3;
	}
	*scanned = length;
	return 0;
}

int http_head_too_large_status(const char *buffer, size_t length)
{
	size_t start = skip_empty_lines(buffer, length);
	return memchr(buffer + start, '\n', length - start) ? 431 : 414;
}

/* ---- the head ---- */

struct line {
	const char *text;
	size_t length; /* without its CRLF or LF */
};

/* The next line of the head from *at, which moves past its end. */
static bool next_line(const char *head, size_t length, size_t *at, struct line *line)
{
	if (*at >= length)
		return false;
	const char *start = head + *at;
	const char *newline = memchr(start, '\n', length - *at);
	size_t end = newline ? (size_t)(newline - head) : length;
	*line = (struct line){start, end - *at};
	if (line->length && line->text[line->length - 1] == '\r')
		line->length--;
	*at = end + 1;
	return true;
}

static int refuse(struct http_request *request, int status, char *error, size_t error_size,
		  const char *why)
{
	request->refusal = status;
	snprintf(error, error_size, "%s", why);
	return -1;
}

static bool equals(const char *text, size_t length, const char *literal)
{
	return length == strlen(literal) && memcmp(text, literal, length) == 0;
}

/* The target's path and query; an absolute-form target
 * ("http://host/livez") is read for its path (RFC 9112, 3.2.2). */
static bool read_target(const char *target, size_t length, struct http_request *request)
{
	for (size_t i = 0; i < length; i++) {
		unsigned char c = (unsigned char)target[i];
		if (c <= 0x20 || c >= 0x7f)
			return false;
	}
	if (length >= 7 && strncasecmp(target, "http://", 7) == 0) {
		const char *slash = memchr(target + 7, '/', length - 7);
		const char *question = memchr(target + 7, '?', length - 7);
		if (!slash || (question && question < slash))
			return false;
		length -= (size_t)(slash - target);
		target = slash;
	}
	if (!length || target[0] != '/')
		return false;
	const char *question = memchr(target, '?', length);
	request->path = target;
	request->path_length = question ? (size_t)(question - target) : length;
	request->query = question ? question + 1 : target + length;
	request->query_length = question ? length - request->path_length - 1 : 0;
	return true;
}

static int parse_request_line(const struct line *line, struct http_request *request, char *error,
			      size_t error_size)
{
	const char *text = line->text, *end = text + line->length;
	const char *space = memchr(text, ' ', line->length);
	if (!space || space == text)
		return refuse(request, 400, error, error_size, "not an HTTP request line");
	for (const char *c = text; c < space; c++)
		if (!is_token_char((unsigned char)*c))
			return refuse(request, 400, error, error_size, "not an HTTP method");
	size_t method_length = (size_t)(space - text);
	request->method = equals(text, method_length, "GET")    ? HTTP_METHOD_GET
			  : equals(text, method_length, "HEAD") ? HTTP_METHOD_HEAD
								: HTTP_METHOD_OTHER;
	const char *target = space + 1;
	const char *second = memchr(target, ' ', (size_t)(end - target));
	if (!second || second == target)
		return refuse(request, 400, error, error_size, "not an HTTP request line");
	const char *version = second + 1;
	size_t version_length = (size_t)(end - version);
	if (version_length != 8 || memcmp(version, "HTTP/", 5) != 0 || version[5] < '0' ||
	    version[5] > '9' || version[6] != '.' || version[7] < '0' || version[7] > '9')
		return refuse(request, 400, error, error_size, "not an HTTP request line");
	if (version[5] != '1' || version[7] > '1')
		return refuse(request, 505, error, error_size,
			      "only HTTP/1.0 and HTTP/1.1 are served");
	request->version_minor = (unsigned)(version[7] - '0');
	if (!read_target(target, (size_t)(second - target), request))
		return refuse(request, 400, error, error_size,
			      "the request target must be a path such as /readyz");
	return 0;
}

/* What the fields said that the request depends on. */
struct fields_seen {
	unsigned hosts;
	bool close, keep_alive, body;
};

/* `Connection: close` or `keep-alive`, among other comma-separated
 * options. */
static void read_connection_options(const char *value, size_t length, struct fields_seen *seen)
{
	const char *end = value + length;
	while (value < end) {
		while (value < end && (*value == ' ' || *value == '\t' || *value == ','))
			value++;
		const char *start = value;
		while (value < end && *value != ',' && *value != ' ' && *value != '\t')
			value++;
		size_t option = (size_t)(value - start);
		if (option == 5 && strncasecmp(start, "close", 5) == 0)
			seen->close = true;
		else if (option == 10 && strncasecmp(start, "keep-alive", 10) == 0)
			seen->keep_alive = true;
	}
}

/* Content-Length: 0 is no body; anything else is one, or not a length. */
static bool read_content_length(const char *value, size_t length, struct fields_seen *seen)
{
	if (!length)
		return false;
	for (size_t i = 0; i < length; i++) {
		if (value[i] < '0' || value[i] > '9')
			return false;
		seen->body |= value[i] != '0';
	}
	return true;
}

static int parse_field(const struct line *line, struct fields_seen *seen,
		       struct http_request *request, char *error, size_t error_size)
{
	const char *colon = memchr(line->text, ':', line->length);
	if (line->text[0] == ' ' || line->text[0] == '\t')
		return refuse(request, 400, error, error_size,
			      "a header field folded over lines (obsolete, RFC 9112 5.2)");
	if (!colon || colon == line->text)
		return refuse(request, 400, error, error_size, "not a header field");
	size_t name_length = (size_t)(colon - line->text);
	for (size_t i = 0; i < name_length; i++)
		if (!is_token_char((unsigned char)line->text[i]))
			return refuse(request, 400, error, error_size,
				      "not a header field name (no space before its colon)");
	const char *value = colon + 1, *end = line->text + line->length;
	for (const char *c = value; c < end; c++) {
		unsigned char byte = (unsigned char)*c;
		if ((byte < 0x20 && byte != '\t') || byte == 0x7f)
			return refuse(request, 400, error, error_size,
				      "a control character in a header field");
	}
	while (value < end && (*value == ' ' || *value == '\t'))
		value++;
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	size_t value_length = (size_t)(end - value);
	const char *name = line->text;
	if (name_length == 4 && strncasecmp(name, "Host", 4) == 0) {
		seen->hosts++;
	} else if (name_length == 10 && strncasecmp(name, "Connection", 10) == 0) {
		read_connection_options(value, value_length, seen);
	} else if (name_length == 14 && strncasecmp(name, "Content-Length", 14) == 0) {
		if (!read_content_length(value, value_length, seen))
			return refuse(request, 400, error, error_size,
				      "Content-Length is not a length");
	} else if (name_length == 17 && strncasecmp(name, "Transfer-Encoding", 17) == 0) {
		seen->body = true;
	} else if (name_length == 6 && strncasecmp(name, "Accept", 6) == 0 && !request->accept) {
		request->accept = value;
		request->accept_length = value_length;
	}
	return 0;
}

int http_request_parse(const char *head, size_t length, struct http_request *request, char *error,
		       size_t error_size)
{
	*request = (struct http_request){0};
	size_t at = skip_empty_lines(head, length);
	struct line line;
	if (!next_line(head, length, &at, &line))
		return refuse(request, 400, error, error_size, "not an HTTP request line");
	if (parse_request_line(&line, request, error, error_size) < 0)
		return -1;
	struct fields_seen seen = {0};
	while (next_line(head, length, &at, &line) && line.length)
		if (parse_field(&line, &seen, request, error, error_size) < 0)
			return -1;
	if (request->version_minor == 1 && seen.hosts != 1)
		return refuse(request, 400, error, error_size,
			      seen.hosts ? "more than one Host header field"
					 : "an HTTP/1.1 request needs a Host header field");
	if (seen.body)
		return refuse(request, 413, error, error_size, "requests here take no body");
	request->keep_alive = !seen.close && (request->version_minor == 1 || seen.keep_alive);
	return 0;
}

/* ---- the query ---- */

bool http_query_next(const char **cursor, const char *end, struct http_parameter *parameter)
{
	const char *start = *cursor;
	if (!start || start > end)
		return false;
	const char *stop = memchr(start, '&', (size_t)(end - start));
	if (!stop)
		stop = end;
	const char *equal = memchr(start, '=', (size_t)(stop - start));
	*parameter = (struct http_parameter){
	    .name = start,
	    .name_length = (size_t)((equal ? equal : stop) - start),
	    .value = equal ? equal + 1 : stop,
	    .value_length = equal ? (size_t)(stop - equal - 1) : 0,
	};
	/* After the last one, NULL: "a&" has an empty one after its '&'. */
	*cursor = stop < end ? stop + 1 : NULL;
	return true;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int http_percent_decode(const char *text, size_t length, char *out, size_t out_size)
{
	size_t used = 0;
	for (size_t i = 0; i < length; i++) {
		int byte = (unsigned char)text[i];
		if (byte == '%') {
			int high = i + 2 < length ? hex_value(text[i + 1]) : -1;
			int low = high >= 0 ? hex_value(text[i + 2]) : -1;
			if (low < 0)
				return -1;
			byte = high * 16 + low;
			i += 2;
		} else if (byte == '+') {
			byte = ' ';
		}
		if (byte == 0 || used + 1 >= out_size)
			return -1;
		out[used++] = (char)byte;
	}
	if (!out_size)
		return -1;
	out[used] = '\0';
	return (int)used;
}
