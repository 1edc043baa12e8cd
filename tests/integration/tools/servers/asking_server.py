"""An MCP server (stdio) that asks the user things in the middle of its tools (elicitation).

Tools: ``book`` asks for a form (a name with a default, a number of seats, a yes/no, an
enum) and answers with what came back; ``pay`` asks the user to open a payment page (URL
mode) and answers with the action. The server gives ``instructions`` at initialize.
"""

from __future__ import annotations

import json
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

server = MCPServer("asking", instructions="Book tables with `book`; `pay` takes the payment.")


class Booking(BaseModel):
    name: str = Field(default="Ada", description="Name on the booking")
    seats: int = Field(description="How many seats")
    window: bool = Field(default=False, description="A table by the window")
    course: Literal["starter", "main", "dessert"] = "main"


@server.tool()
async def book(ctx: Context) -> str:
    """Book a table: asks the user for the details."""
    result = await ctx.elicit("Who is the table for?", Booking)
    data = result.data.model_dump() if result.action == "accept" else None
    return json.dumps({"action": result.action, "data": data})


@server.tool()
async def pay(ctx: Context) -> str:
    """Take the payment on the payment provider's page."""
    result = await ctx.elicit_url(
        "Pay on the provider's page.", "https://pay.example.com/checkout/42", "pay-42"
    )
    return json.dumps({"action": result.action})


if __name__ == "__main__":
    server.run()
