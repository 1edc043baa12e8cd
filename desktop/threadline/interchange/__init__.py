"""Moving conversations in and out of Threadline: other apps' exports, and our own JSON.

Imported files are untrusted input. Parsers turn one file into
:class:`~threadline.interchange.model.ImportedConversation` records (or a
:class:`~threadline.interchange.model.ImportProblem` for a conversation that cannot be
read); the store writes each conversation in its own transaction. Exporters read
stored trees and write Markdown or Threadline's lossless JSON.
"""
