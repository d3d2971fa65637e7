"""The seed's ToolRegistry.retrieve_tools, copied faithfully (pure Python
lists, full sort), timed on vectors written by bench/retrieval.ts.
Usage: python3 seed-retrieve.py VECTORS.f32 COUNT DIM QUERIES.f32 QCOUNT TOPK
Prints the per-query milliseconds as JSON."""
import json
import math
import sys
import time
from array import array


class FixedEmbedding:
    def __init__(self):
        self.next = None

    def get_embedding(self, _text):
        return self.next


class ToolRegistry:
    def __init__(self, embedding_client):
        self.embedding_client = embedding_client
        self.tools = {}

    def register_tool(self, name, description, parameters, category):
        vector = list(self.embedding_client.get_embedding(f"{name}: {description}"))
        self.tools[name] = {
            "category": category,
            "vector": vector,
            "schema": {"type": "function", "function": {
                "name": name, "description": description, "parameters": parameters}},
        }

    def retrieve_tools(self, query, top_k=5, category=None):
        if top_k < 1:
            return []
        query_vector = list(self.embedding_client.get_embedding(query))
        scored = []
        for name, tool in self.tools.items():
            if category is not None and tool["category"] != category:
                continue
            vector = tool["vector"]
            if len(vector) != len(query_vector):
                raise ValueError("embedding dimensions differ")
            denominator = math.sqrt(sum(x*x for x in vector) * sum(x*x for x in query_vector))
            score = sum(x*y for x, y in zip(vector, query_vector)) / max(denominator, 1e-9)
            scored.append((score, name))
        scored.sort(reverse=True)
        return [self.tools[name]["schema"] for _, name in scored[:top_k]]


def read(path, count, dim):
    data = array("f")
    with open(path, "rb") as f:
        data.frombytes(f.read())
    return [data[i * dim:(i + 1) * dim] for i in range(count)]


def main():
    vectors_path, count, dim, queries_path, qcount, top_k = sys.argv[1:7]
    count, dim, qcount, top_k = int(count), int(dim), int(qcount), int(top_k)
    client = FixedEmbedding()
    registry = ToolRegistry(client)
    for i, vector in enumerate(read(vectors_path, count, dim)):
        client.next = vector
        registry.register_tool(f"tool_{i}", "", {}, None)
    times = []
    for query in read(queries_path, qcount, dim):
        client.next = query
        started = time.perf_counter()
        registry.retrieve_tools("q", top_k=top_k)
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps(times))


main()
