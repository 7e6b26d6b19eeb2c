"""Everything that only serves Slack: the Bolt app and its listeners, replies, pages and Block Kit, the
HTTP server and Socket Mode worker, settings, the thread store and the app manifest."""
