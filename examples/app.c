/* SPDX-License-Identifier: MIT */
/*
 * An MCP App (the extension io.modelcontextprotocol/ui): a tool whose result a host that
 * renders apps shows in an HTML view of the server's own.
 *
 * The view is a resource ui://thermometer/view.html of type text/html;profile=mcp-app
 * (mcp_server_add_app), a small document with its script inline, since a host's default
 * content security policy allows no other. It speaks the view's side of the protocol
 * over postMessage with the host: ui/initialize, then ui/notifications/initialized, then
 * it draws each result the host passes on (ui/notifications/tool-result). The tool
 * to_fahrenheit converts degrees Celsius to Fahrenheit and is linked to the view
 * (mcp_server_add_app_tool): its listing's _meta.ui.resourceUri names it. Its result
 * carries the numbers in structuredContent for the view, and says the same in its text
 * for hosts that show no apps. The server speaks over stdin and stdout.
 *
 * Usage: examples_app
 * (a server on stdio; e.g. mcp -- examples_app tools call to_fahrenheit celsius=21)
 */
#include <stdio.h>

#include <mcp/mcp.h>

#define VIEW_URI "ui://thermometer/view.html"

static const char view_html[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Thermometer</title>\n"
    "<style>body{font:16px system-ui,sans-serif;margin:16px}"
    "#f{font-size:48px;font-weight:600}</style></head>\n"
    "<body><div id=\"f\">&hellip;</div><div id=\"c\"></div>\n"
    "<script>\n"
    "function post(m) { window.parent.postMessage(m, '*'); }\n"
    "function show(id, s) { document.getElementById(id).textContent = s; }\n"
    "window.addEventListener('message', function (ev) {\n"
    "  var m = ev.data;\n"
    "  if (ev.source !== window.parent || !m || m.jsonrpc !== '2.0') return;\n"
    "  if (m.id === 1 && m.method === undefined) {\n"
    "    post({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });\n"
    "  } else if (m.method === 'ui/notifications/tool-result') {\n"
    "    var s = (m.params && m.params.structuredContent) || {};\n"
    "    show('f', s.fahrenheit + ' \\u00b0F');\n"
    "    show('c', s.celsius + ' \\u00b0C');\n"
    "  } else if (m.method !== undefined && m.id !== undefined) {\n"
    "    post({ jsonrpc: '2.0', id: m.id, result: {} });\n"
    "  }\n"
    "});\n"
    "post({ jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: {\n"
    "  appInfo: { name: 'thermometer', version: '1.0.0' }, appCapabilities: {},\n"
    "  protocolVersion: '2026-01-26' } });\n"
    "</script></body></html>\n";

static json_t *to_fahrenheit(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    double c = json_number_value(json_object_get(args, "celsius")); /* the schema checked it */
    double f = c * 9 / 5 + 32;
    char text[128];
    snprintf(text, sizeof(text), "%g \u00b0C is %g \u00b0F", c, f);
    json_t *result = mcp_text_result(text);
    json_t *numbers = json_pack("{s:f, s:f}", "celsius", c, "fahrenheit", f);
    if (result == NULL || numbers == NULL) {
        json_decref(result);
        json_decref(numbers);
        return NULL; /* answered -32603 */
    }
    if (json_object_set_new(result, "structuredContent", numbers) != 0) { /* takes numbers */
        json_decref(result);
        return NULL;
    }
    return result;
}

int main(void)
{
    mcp_server *srv = mcp_server_new("app-example", "1.0.0");
    if (srv == NULL)
        return 1;
    mcp_app_def view = {
        .size = sizeof(view),
        .uri = VIEW_URI,
        .name = "thermometer",
        .title = "Thermometer",
        .description = "Shows a temperature in degrees Fahrenheit and Celsius",
        .html = view_html,
        .ui = "{\"prefersBorder\":true}",
    };
    mcp_tool_def tool = {
        .size = sizeof(tool),
        .name = "to_fahrenheit",
        .title = "Celsius to Fahrenheit",
        .description = "Converts degrees Celsius to Fahrenheit; a host that renders MCP Apps "
                       "shows the result in a thermometer view",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"celsius\":{\"type\":\"number\","
                        "\"minimum\":-273.15}},\"required\":[\"celsius\"]}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"celsius\":{\"type\":\"number\"},"
                         "\"fahrenheit\":{\"type\":\"number\"}},"
                         "\"required\":[\"celsius\",\"fahrenheit\"]}",
        .annotations = "{\"readOnlyHint\":true}",
        .fn = to_fahrenheit,
    };
    int rc = mcp_server_add_app(srv, &view);
    /* Visibility 0: both the model and the view may call the tool. */
    if (rc == MCP_OK)
        rc = mcp_server_add_app_tool(srv, &tool, VIEW_URI, 0);
    if (rc == MCP_OK)
        rc = mcp_serve_stdio(srv); /* until stdin closes, or SIGINT or SIGTERM */
    if (rc != MCP_OK)
        fprintf(stderr, "examples_app: %s\n", mcp_strerror(rc));
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
