/*
 * subscriptions/listen for the application: see client_int.h.
 */
#include "client/client_int.h"

int mcp__listen_notification(mcp_client *c, const char *method, const json_t *params)
{
    (void)c, (void)method, (void)params;
    return 0;
}

void mcp__listen_fail_all(mcp_client *c, int status, const char *why)
{
    (void)c, (void)status, (void)why;
}
