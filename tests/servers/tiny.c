/* A minimal stdio MCP server for the 10,000-server measurement: initialize, tools/list,
   tools/call (echo -> "ok"), ping; anything else with an id: method not found. */
#include <stdio.h>
#include <string.h>
static char line[1 << 20];
static void reply(const char *id, const char *body) {
    printf("{\"jsonrpc\":\"2.0\",\"id\":%s,%s}\n", id, body);
    fflush(stdout);
}
int main(void) {
    while (fgets(line, sizeof line, stdin)) {
        char *p = strstr(line, "\"id\":");
        if (!p) continue; /* a notification */
        p += 5;
        while (*p == ' ') p++;
        char id[128]; int n = 0;
        if (*p == '"') { id[n++] = *p++; while (*p && *p != '"' && n < 120) id[n++] = *p++; id[n++] = '"'; }
        else while (*p && *p != ',' && *p != '}' && n < 120) id[n++] = *p++;
        id[n] = 0;
        if (strstr(line, "\"method\":\"initialize\""))
            reply(id, "\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"tiny\",\"version\":\"1\"}}");
        else if (strstr(line, "\"method\":\"tools/list\""))
            reply(id, "\"result\":{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}");
        else if (strstr(line, "\"method\":\"tools/call\""))
            reply(id, "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}");
        else if (strstr(line, "\"method\":\"ping\""))
            reply(id, "\"result\":{}");
        else if (strstr(line, "\"method\":"))
            reply(id, "\"error\":{\"code\":-32601,\"message\":\"Method not found\"}");
    }
    return 0;
}
