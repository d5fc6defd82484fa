"""The PyTorch side of bench/epoch, on one thread, timing only the bare training loop
(next batch -> forward -> zero grad -> backward -> step); loading the data, building the
model and evaluating are NOT timed. Prints, per repetition, the loop's wall seconds and
its CPU seconds (process time; one thread, so the loop's).

  mlp (default): one epoch of the MLP 784-256-128-10 on Fashion-MNIST with what
      scenarios/central-mlp.ini asks of hetsim (batch 64, SGD momentum 0.9, lr 0.05, a
      fresh shuffle, the last batch partial).
  cnn: the CNN (conv 32 then 64 channels, kernel 5, 2x2 max-pool after each, hidden 128)
      over 8 shares of 1,000 images, batches of 64 within each share (the last of 40),
      128 steps: what one round of 8 local-SGD agents with 1,000 images each trains in
      bench/epoch's CNN run (SGD momentum 0.9, lr 0.05, as scenarios/central-cnn.ini).
  mlp16: the per-agent loop of one round of 16 local-SGD agents (scenarios/quickstart.ini
      with method localsgd): agent by agent, each with its own MLP 784-256-128-10 and
      optimiser (SGD momentum 0.9, lr 0.02), batches of 64 over its 3,750 images.

The memory format of the CNN's inputs and model: contiguous (NCHW, the default) or cl
(channels_last); the MLP ignores it.

Usage: python3 bench/torch_epoch.py DATA_DIR REPETITIONS [mlp|cnn|mlp16] [contiguous|cl]"""
import gzip
import sys
import time

import numpy as np
import torch


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                               torch.nn.ReLU(), torch.nn.Linear(128, 10))


def cnn():
    return torch.nn.Sequential(torch.nn.Conv2d(1, 32, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Conv2d(32, 64, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Flatten(), torch.nn.Linear(3136, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


def batches(kind, order, batch):
    """Row index tensors of the batches, in training order."""
    if kind == "mlp":
        return [order[at:at + batch] for at in range(0, order.shape[0], batch)]
    agents, share = (16, 3750) if kind == "mlp16" else (8, 1000)
    return [(a, order[a * share + at:a * share + min(at + batch, share)]) for a in range(agents)
            for at in range(0, share, batch)]


def main():
    data, repetitions = sys.argv[1], int(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else "mlp"
    if kind not in ("mlp", "cnn", "mlp16"):
        sys.exit(f"torch_epoch.py: unknown model '{kind}' (mlp, cnn or mlp16)")
    torch.set_num_threads(1)
    cl = kind == "cnn" and len(sys.argv) > 4 and sys.argv[4] == "cl"
    torch.manual_seed(1)
    shape = (-1, 1, 28, 28) if kind == "cnn" else (-1, 784)
    x = torch.from_numpy(read_idx(f"{data}/train-images-idx3-ubyte.gz", 16).reshape(shape).astype(np.float32) / 255)
    y = torch.from_numpy(read_idx(f"{data}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    batch = 64
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
    for _ in range(repetitions):
        loss_fn = torch.nn.CrossEntropyLoss()
        if kind == "mlp16":
            # every agent starts from the same model, as in hetsim; the copies are made
            # before the clock starts
            models = [mlp() for _ in range(16)]
            for m in models[1:]:
                m.load_state_dict(models[0].state_dict())
            opts = [torch.optim.SGD(m.parameters(), lr=0.02, momentum=0.9) for m in models]
        else:
            models = [mlp() if kind == "mlp" else cnn()]
            if cl:
                models[0] = models[0].to(memory_format=torch.channels_last)
            opts = [torch.optim.SGD(models[0].parameters(), lr=0.05, momentum=0.9)]
        start, cpu = time.perf_counter(), time.process_time()
        order = torch.randperm(x.shape[0])
        for item in batches(kind, order, batch):
            agent, rows = item if kind != "mlp" else (0, item)
            if kind == "cnn":
                agent = 0
            model, opt = models[agent], opts[agent]
            loss = loss_fn(model(x[rows]), y[rows])
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
        print(f"{time.perf_counter() - start:.6f} {time.process_time() - cpu:.6f}", flush=True)


if __name__ == "__main__":
    main()
