"""The branch map: a conversation's tree of branches beside the chat, painted in one scroll area."""
