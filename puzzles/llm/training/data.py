"""The training text and its byte-level tokenizer (vocabulary 256: a token is a byte), the
train/validation split and the batches. Nothing is downloaded: the text ships in `data/`
(four plays of Shakespeare, attribution in data/SHAKESPEARE.md)."""

from pathlib import Path

import numpy as np

VOCAB = 256
DATA = Path(__file__).resolve().parent / "data" / "shakespeare.txt"
VAL_FRACTION = 0.1  # the last tenth of the text (the end of Twelfth Night) is never trained on


class DataMissing(FileNotFoundError):
    pass


def encode(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-8"), np.uint8).astype(np.int32)


def decode(tokens) -> str:
    return bytes(int(t) for t in tokens).decode("utf-8", errors="replace")


def load_tokens(path=None) -> np.ndarray:
    path = Path(path or DATA)
    if not path.is_file():
        raise DataMissing(
            f"training text {path} not found: it ships with the course (puzzles/llm/training/data/); "
            "reinstall the course, or pass --data PATH to a plain-text file"
        )
    return np.fromfile(path, np.uint8).astype(np.int32)


def split(tokens: np.ndarray, val_fraction: float = VAL_FRACTION) -> tuple[np.ndarray, np.ndarray]:
    cut = int(len(tokens) * (1 - val_fraction))
    return tokens[:cut], tokens[cut:]


def batch(tokens: np.ndarray, B: int, T: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """B windows of T + 1 tokens at random offsets: inputs (B, T) and the next tokens (B, T)."""
    start = rng.integers(0, len(tokens) - T - 1, B)
    idx = start[:, None] + np.arange(T + 1)
    w = tokens[idx]
    return w[:, :-1].astype(np.int32), w[:, 1:].astype(np.int32)
