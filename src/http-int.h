/*
 * http-int.h: what http.c (the daemon) and transport_sse.c (the legacy
 * SSE sessions) share. Loop thread only, like everything HTTP.
 */
#ifndef MCP_HTTP_INT_H
#define MCP_HTTP_INT_H

#define SSE_BUCKETS	4096

struct conn_info;

struct http {
	struct mcp_server	*srv;
	struct http_conf	*conf;
	struct MHD_Daemon	*d;
	ev_io			 io;		/* MHD's epoll fd */
	ev_timer		 timer;		/* MHD_get_timeout */
	ev_timer		 sweep;		/* request deadlines */
	unsigned int		 port;
	int			 loopback;	/* Host checks apply */
	int			 quiesced;
	int			 need_run;	/* a stream was resumed */
	int			 recheck;	/* draining: check if done */
	int			 ended;		/* every stream told to end */
	struct conn_info	*conns;
	/* transport_sse.c */
	struct sse_stream	*buckets[SSE_BUCKETS];
	struct sse_stream	*streams;	/* every live stream */
	int			 nstreams;
};

void	 mcp__http_streaming(struct MHD_Connection *conn) MCP_HIDDEN;

#endif /* MCP_HTTP_INT_H */
