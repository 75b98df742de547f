"""The transport-neutral API: typed requests and answers (`types`), the service every front-end
talks to (`protocol`), one repository's service behind the rules it answers by (`serving`), and
the one table of methods that the socket, HTTP, MCP and LSP servers serve unchanged (`methods`)."""
