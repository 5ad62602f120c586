/* SPDX-License-Identifier: MIT */
/*
 * Progress and server log lines on stderr.
 *
 * The client's callbacks run on its loop thread while the main thread waits
 * for a result and then prints; one mutex keeps the progress bar, log lines
 * and error messages from tearing each other.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BAR_WIDTH 20

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static bool status_quiet;
static bool status_tty;
static bool bar_shown;
static char bar_line[1024]; /* the bar as last drawn, to redraw it under a log line */

static bool status_structured;

void cli_status_structured(bool on)
{
    status_structured = on;
}

void cli_status_init(bool quiet)
{
    status_quiet = quiet;
    status_tty = isatty(STDERR_FILENO) == 1;
}

static int terminal_columns(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/*
 * Copies src into dst (size bytes), replacing control characters with '?'.
 * Text from the server must not be able to move the cursor or rewrite the
 * terminal; keep_newlines lets multi-line log data through.
 */
static void copy_printable(char *dst, size_t size, const char *src, bool keep_newlines)
{
    size_t n = 0;
    for (; *src != '\0' && n + 1 < size; src++) {
        unsigned char ch = (unsigned char)*src;
        if ((ch < 0x20 && !(keep_newlines && (ch == '\n' || ch == '\t'))) || ch == 0x7f)
            ch = '?';
        dst[n++] = (char)ch;
    }
    dst[n] = '\0';
}

/*
 * Cuts line so that it fits in `columns` terminal cells, never inside a
 * UTF-8 sequence. Counting code points rather than cells is close enough
 * for a status line.
 */
static void fit_to_columns(char *line, int columns)
{
    int cells = 0;
    for (char *p = line; *p != '\0'; p++) {
        if (((unsigned char)*p & 0xC0) == 0x80)
            continue;
        if (cells == columns) {
            *p = '\0';
            return;
        }
        cells++;
    }
}

static void clear_bar_locked(void)
{
    if (bar_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        bar_shown = false;
    }
}

void cli_status_progress(double progress, double total, const char *message, void *user)
{
    (void)user;
    if (status_quiet)
        return;
    char msg[512];
    copy_printable(msg, sizeof msg, message != NULL ? message : "", false);
    bool known_total = isfinite(total) && total > 0 && isfinite(progress);

    pthread_mutex_lock(&status_lock);
    if (status_tty) {
        char line[sizeof bar_line];
        if (known_total) {
            double frac = progress / total;
            frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
            int filled = (int)(frac * BAR_WIDTH + 0.5);
            char bar[BAR_WIDTH + 1];
            for (int i = 0; i < BAR_WIDTH; i++)
                bar[i] = i < filled ? '#' : '-';
            bar[BAR_WIDTH] = '\0';
            snprintf(line, sizeof line, "[%s] %3d%%%s%s", bar, (int)(frac * 100 + 0.5),
                     msg[0] != '\0' ? " " : "", msg);
        } else {
            snprintf(line, sizeof line, "[%g] %s", progress, msg);
        }
        /* A line that wraps cannot be overwritten with \r; keep it on one row. */
        fit_to_columns(line, terminal_columns() - 1);
        memcpy(bar_line, line, sizeof bar_line);
        fprintf(stderr, "\r%s\033[K", line);
        fflush(stderr);
        bar_shown = true;
    } else if (known_total) {
        fprintf(stderr, "progress %g/%g (%d%%)%s%s\n", progress, total,
                (int)(progress / total * 100 + 0.5), msg[0] != '\0' ? " " : "", msg);
    } else {
        fprintf(stderr, "progress %g%s%s\n", progress, msg[0] != '\0' ? " " : "", msg);
    }
    pthread_mutex_unlock(&status_lock);
}

void cli_status_notification(mcp_client *c, const char *method, const json_t *params, void *user)
{
    (void)c;
    (void)user;
    if (status_quiet || method == NULL || strcmp(method, "notifications/message") != 0)
        return;
    const char *level = json_string_value(json_object_get(params, "level"));
    const json_t *data = json_object_get(params, "data");
    char *dumped = NULL;
    const char *text = json_string_value(data);
    if (text == NULL && data != NULL) {
        dumped = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
        text = dumped;
    }
    if (text == NULL)
        text = "";

    pthread_mutex_lock(&status_lock);
    bool redraw = bar_shown;
    clear_bar_locked();
    if (status_structured) {
        /* The logger as one logfmt pair, quoted as mcp_log_write reads it. */
        const char *logger = json_string_value(json_object_get(params, "logger"));
        char fields[512] = "";
        if (logger != NULL) {
            size_t n = (size_t)snprintf(fields, sizeof fields, "logger=\"");
            for (const char *p = logger; *p != '\0' && n + 3 < sizeof fields; p++) {
                if (*p == '"' || *p == '\\')
                    fields[n++] = '\\';
                fields[n++] = *p;
            }
            fields[n++] = '"';
            fields[n] = '\0';
        }
        int lv = level != NULL ? mcp_log_level_parse(level) : MCP_LOG_INFO;
        mcp_log_write(lv >= 0 ? (mcp_log_level)lv : MCP_LOG_INFO, "server", text,
                      logger != NULL ? fields : NULL);
    } else if (status_tty) {
        char safe[4096];
        copy_printable(safe, sizeof safe, text, true);
        char safe_level[32];
        copy_printable(safe_level, sizeof safe_level, level != NULL ? level : "?", false);
        fprintf(stderr, "[%s] %s\n", safe_level, safe);
    } else {
        fprintf(stderr, "[%s] %s\n", level != NULL ? level : "?", text);
    }
    if (redraw) {
        fprintf(stderr, "%s\033[K", bar_line);
        bar_shown = true;
    }
    fflush(stderr);
    pthread_mutex_unlock(&status_lock);
    free(dumped);
}

void cli_status_done(void)
{
    pthread_mutex_lock(&status_lock);
    clear_bar_locked();
    pthread_mutex_unlock(&status_lock);
}

void cli_errorf(const char *fmt, ...)
{
    pthread_mutex_lock(&status_lock);
    clear_bar_locked();
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
    pthread_mutex_unlock(&status_lock);
}

/* Prints a JSON-RPC error the server answered: "error: CODE MESSAGE", then its data. */
void cli_print_rpc_error(const char *prefix, const mcp_rpc_error *err)
{
    cli_errorf("%serror: %d %s\n", prefix, err->code, err->message);
    if (err->data != NULL) {
        char *data = json_dumps(err->data, JSON_COMPACT | JSON_ENCODE_ANY);
        if (data != NULL)
            cli_errorf("  data: %s\n", data);
        free(data);
    }
}

void cli_put_text(FILE *f, const char *text, const char *indent)
{
    for (const unsigned char *p = (const unsigned char *)text; p != NULL && *p != '\0'; p++) {
        if (*p == '\n' && indent == NULL)
            return; /* the first line only */
        if (*p == '\n') {
            fputc('\n', f);
            fputs(indent, f);
        } else if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
            fputc('?', f);
        } else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
            fputc('?', f); /* a C1 control (U+0080 to U+009F), CSI and OSC among them */
            p++;
        } else {
            fputc(*p, f);
        }
    }
}
