/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything's app (MCP Apps): the tool app_sum adds two numbers, and a host that
 * renders apps shows its result in the view ui://everything/sum.html, a document with
 * its script inline (the default content security policy of a host allows no other),
 * that speaks the view's side of the protocol over postMessage: ui/initialize to the
 * host, ui/notifications/initialized, then it draws the tool's input and result as they
 * come (ui/notifications/tool-input, ui/notifications/tool-result).
 */
#include "everything.h"
#include "log_flag.h"

#include <math.h>
#include <stdio.h>

#define SUM_VIEW_URI "ui://everything/sum.html"

static const char sum_view[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sum</title>\n"
    "<style>body{font:16px system-ui,sans-serif;margin:16px}"
    "#sum{font-size:48px;font-weight:600}#terms{color:#555}</style></head>\n"
    "<body><div id=\"status\">loading</div><div id=\"sum\"></div><div id=\"terms\"></div>\n"
    "<script>\n"
    "(function () {\n"
    "  var next = 1, pending = {};\n"
    "  function post(m) { window.parent.postMessage(m, '*'); }\n"
    "  function text(id, s) { document.getElementById(id).textContent = s; }\n"
    "  function request(method, params) {\n"
    "    var id = next++;\n"
    "    post({ jsonrpc: '2.0', id: id, method: method, params: params });\n"
    "    return new Promise(function (ok, no) { pending[id] = { ok: ok, no: no }; });\n"
    "  }\n"
    "  window.addEventListener('message', function (ev) {\n"
    "    if (ev.source !== window.parent) return;\n"
    "    var m = ev.data;\n"
    "    if (!m || m.jsonrpc !== '2.0') return;\n"
    "    if (m.method === undefined) {\n"
    "      var p = pending[m.id];\n"
    "      if (!p) return;\n"
    "      delete pending[m.id];\n"
    "      if (m.error) p.no(m.error); else p.ok(m.result);\n"
    "      return;\n"
    "    }\n"
    "    if (m.method === 'ui/notifications/tool-input') {\n"
    "      var a = (m.params && m.params.arguments) || {};\n"
    "      text('terms', a.a + ' + ' + a.b);\n"
    "    } else if (m.method === 'ui/notifications/tool-result') {\n"
    "      var r = m.params || {}, s = r.structuredContent || {};\n"
    "      text('sum', r.isError ? 'error' : String(s.sum));\n"
    "      text('terms', s.a + ' + ' + s.b);\n"
    "      text('status', r.isError ? 'error' : 'done');\n"
    "    } else if (m.id !== undefined) {\n"
    "      post({ jsonrpc: '2.0', id: m.id, result: {} });\n"
    "    }\n"
    "  });\n"
    "  request('ui/initialize', { appInfo: { name: 'everything-sum', version: '1.0.0' },\n"
    "                            appCapabilities: {}, protocolVersion: '2026-01-26' })\n"
    "    .then(function (res) {\n"
    "      text('status', 'initialized ' + res.protocolVersion);\n"
    "      post({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });\n"
    "    }, function (e) { text('status', 'initialize failed: ' + JSON.stringify(e)); });\n"
    "})();\n"
    "</script></body></html>\n";

static json_t *tool_app_sum(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    double a = json_number_value(json_object_get(args, "a"));
    double b = json_number_value(json_object_get(args, "b"));
    double sum = a + b;
    if (!isfinite(sum))
        return mcp_tool_error("the sum is not a finite number");
    /* The text says it all for a host without apps; the view draws structuredContent. */
    json_t *result = text_resultf("%g + %g = %g%s", a, b, sum,
                                  mcp_ctx_client_supports_apps(ctx) ? ""
                                                                    : " (no view: this client "
                                                                      "does not show apps)");
    json_object_set_new(result, "structuredContent",
                        json_pack("{s:f, s:f, s:f}", "a", a, "b", b, "sum", sum));
    return result;
}

int everything_add_app(mcp_server *srv)
{
    mcp_app_def view = {
        .size = sizeof view,
        .uri = SUM_VIEW_URI,
        .name = "sum-view",
        .title = "Sum",
        .description = "Shows the result of app_sum",
        .html = sum_view,
        .ui = "{\"csp\":{\"connectDomains\":[]},\"prefersBorder\":true}",
    };
    mcp_tool_def tool = {
        .size = sizeof tool,
        .name = "app_sum",
        .title = "Sum, with a view",
        .description = "Adds a and b; a host that renders MCP Apps shows the sum in its view",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
                        "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
                         "\"b\":{\"type\":\"number\"},\"sum\":{\"type\":\"number\"}},"
                         "\"required\":[\"a\",\"b\",\"sum\"]}",
        .annotations = "{\"readOnlyHint\":true}",
        .fn = tool_app_sum,
        .flags = MCP_HANDLER_INLINE,
    };
    int rc = mcp_server_add_app(srv, &view);
    if (rc == MCP_OK)
        rc = mcp_server_add_app_tool(srv, &tool, SUM_VIEW_URI,
                                     MCP_APP_VISIBLE_MODEL | MCP_APP_VISIBLE_APP);
    if (rc != MCP_OK)
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "cannot add the app: %s", mcp_strerror(rc));
    return rc;
}
