#include "supervisor/http/http_response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_writer.h"

const char *http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Unknown";
}

void http_response_error(struct http_response *response, int status, const char *message)
{
	struct json_writer out;
	jw_init(&out, strlen(message) + 32);
	jw_object_open(&out);
	jw_field_cstring(&out, "error", message);
	jw_object_close(&out);
	*response =
	    (struct http_response){.status = status, .content_type = HTTP_CONTENT_TYPE_JSON};
	response->body = jw_take_line(&out, &response->body_length, NULL);
}

size_t http_response_head(const struct http_response *response, bool keep_alive, time_t now,
			  char *head, size_t size)
{
	/* RFC 9110's IMF-fixdate: an origin server with a clock sends Date. */
	char date[64];
	struct tm utc;
	gmtime_r(&now, &utc);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &utc);
	int length =
	    snprintf(head, size,
		     "HTTP/1.1 %d %s\r\n"
		     "Date: %s\r\n"
		     "Content-Type: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "Cache-Control: no-store\r\n"
		     "%s"
		     "Connection: %s\r\n\r\n",
		     response->status, http_reason(response->status), date,
		     response->content_type ? response->content_type : HTTP_CONTENT_TYPE_TEXT,
		     response->body_length, response->allow ? "Allow: GET, HEAD\r\n" : "",
		     keep_alive ? "keep-alive" : "close");
	return length > 0 && (size_t)length < size ? (size_t)length : 0;
}

void http_response_free(struct http_response *response)
{
	free(response->body);
	response->body = NULL;
	response->body_length = 0;
}
