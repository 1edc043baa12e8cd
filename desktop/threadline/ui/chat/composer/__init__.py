"""The composer: the box a message is written in, its attachments, model and agent pickers, meter."""
