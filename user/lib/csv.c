// SPDX-License-Identifier: GPL-2.0
/*
 * Line-oriented CSV reader. Lines are read with getline() so that length is
 * unbounded, and split in place so a million-line file costs no per-field
 * allocation.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

void csv_init(struct csv_reader *r, FILE *fp, const char *name,
	      unsigned int flags)
{
	memset(r, 0, sizeof(*r));
	r->fp = fp;
	r->name = name;
	r->flags = flags;
}

void csv_free(struct csv_reader *r)
{
	free(r->line);
	free(r->field);
	r->line = NULL;
	r->field = NULL;
	r->cap = 0;
	r->maxfield = 0;
	r->nfield = 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Where an unquoted field's scan stops: its end (NUL, comma) or a quote. */
static const unsigned char field_stop[256] = { [0] = 1, [','] = 1, ['"'] = 1 };

int csv_split(char *line, char **field, unsigned int max, const char **why)
{
	unsigned int n = 0;
	char *p = line;

	for (;;) {
		char *start, *end;

		while (is_blank(*p))
			p++;
		if (*p == '"') {
			/* Quoted: unquote in place, "" stands for one quote. */
			char *w = ++p;

			start = w;
			for (;;) {
				if (!*p) {
					*why = "unterminated quoted field";
					return -EINVAL;
				}
				if (*p == '"') {
					if (p[1] != '"')
						break;
					p++;
				}
				*w++ = *p++;
			}
			p++;
			end = w;
			while (is_blank(*p))
				p++;
			if (*p && *p != ',') {
				*why = "junk after a quoted field";
				return -EINVAL;
			}
		} else {
			start = p;
			while (!field_stop[(unsigned char)*p])
				p++;
			if (*p == '"') {
				*why = "quote inside an unquoted field";
				return -EINVAL;
			}
			end = p;
			while (end > start && is_blank(end[-1]))
				end--;
		}
		if (n < max)
			field[n] = start;
		n++;
		if (!*p) {
			*end = '\0';
			return (int)n;
		}
		p++; /* the comma; end <= the comma, so terminating is safe */
		*end = '\0';
	}
}

int csv_next(struct csv_reader *r)
{
	for (;;) {
		ssize_t len = getline(&r->line, &r->cap, r->fp);
		size_t want;
		char *p;
		int n;

		if (len < 0) {
			if (ferror(r->fp))
				return errno ? -errno : -EIO;
			return 0;
		}
		r->lineno++;
		r->bytes += (unsigned long long)len;
		if (len && r->line[len - 1] == '\n')
			r->line[--len] = '\0';
		if (len && r->line[len - 1] == '\r')
			r->line[--len] = '\0';
		if (r->lineno == 1 && len >= 2 &&
		    ((r->line[0] == '\xff' && r->line[1] == '\xfe') ||
		     (r->line[0] == '\xfe' && r->line[1] == '\xff'))) {
			/* Say what it is rather than "NUL byte in line". */
			r->why =
				"UTF-16 text (byte-order mark); convert the file to UTF-8";
			return -EINVAL;
		}
		if (r->lineno == 1 && len >= 3 &&
		    !memcmp(r->line, "\xef\xbb\xbf", 3)) {
			/* A UTF-8 byte-order mark, as Windows editors write. */
			memmove(r->line, r->line + 3, (size_t)len - 2);
			len -= 3;
		}
		if (strlen(r->line) != (size_t)len) {
			r->why = "NUL byte in line";
			return -EINVAL;
		}
		for (p = r->line; is_blank(*p); p++)
			;
		if ((r->flags & CSV_SKIP_COMMENTS) && *p == '#' && r->comment)
			r->comment(r->comment_ctx, p, r->lineno);
		if (!*p || ((r->flags & CSV_SKIP_COMMENTS) && *p == '#'))
			continue;
		/*
		 * A line has at most len + 1 fields: room for that many (the
		 * longest line's, a pointer a byte) needs no count of commas.
		 */
		want = (size_t)len + 1;
		if (want > r->maxfield) {
			char **f;

			if (want > INT_MAX / 2)
				return -ENOMEM;
			f = realloc(r->field, (want + 64) * sizeof(*f));
			if (!f)
				return -ENOMEM;
			r->field = f;
			r->maxfield = (unsigned int)want + 64;
		}
		n = csv_split(r->line, r->field, r->maxfield, &r->why);
		if (n < 0)
			return n;
		r->nfield = (unsigned int)n;
		return n;
	}
}

int csv_find(char *const *field, unsigned int nfield, const char *name)
{
	unsigned int i;

	for (i = 0; i < nfield; i++)
		if (!strcmp(field[i], name))
			return (int)i;
	return -1;
}
