"""Words out of text: the tokenizer, the message kinds, orders to the agent."""
