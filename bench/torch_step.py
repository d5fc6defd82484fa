"""The PyTorch side of bench/train_step's CNN comparison: one training step of the CNN of
scenarios/central-cnn.ini (conv 32 then 64 channels, kernel 5, 2x2 max-pool after each,
hidden 128, batch 64, SGD momentum 0.9) on one thread, in several configurations, so
that hetsim is compared with PyTorch's best and not with one arbitrary setting:

  memory format   contiguous (NCHW) | channels_last (NHWC)
  oneDNN          torch.backends.mkldnn.enabled True | False (False: ATen's own im2col
                  convolution on the BLAS; measured with the first step order only, it is
                  several times slower)
  step order      zero: zero_grad(set_to_none=False), forward, backward, step
                  none: zero_grad(set_to_none=True), forward, backward, step
                  late: forward, zero_grad(set_to_none=False), backward, step
                  (bench/torch_epoch.py's order)

The malloc setting is the caller's: glibc's defaults give back the big activation
buffers after each step (mmap and trim thresholds) and fault them in again, which halves
the speed on some runs; bench/train_step runs this script with and without
GLIBC_TUNABLES that keep them.

Each configuration runs SECONDS of thread CPU time per round, the configurations taking
turns, ROUNDS rounds; prints one line per configuration: its name, then its rate
(steps per CPU second) in each round.

Usage: python3 bench/torch_step.py ROUNDS SECONDS"""
import sys
import time

import torch


def cnn():
    return torch.nn.Sequential(torch.nn.Conv2d(1, 32, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Conv2d(32, 64, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Flatten(), torch.nn.Linear(3136, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


class Config:
    def __init__(self, fmt, mkldnn, order, x):
        self.name = f"{fmt} mkldnn={'on' if mkldnn else 'off'} order={order}"
        self.mkldnn, self.order = mkldnn, order
        self.model = cnn()
        self.x = x
        if fmt == "channels_last":
            self.model = self.model.to(memory_format=torch.channels_last)
            self.x = x.contiguous(memory_format=torch.channels_last)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.rates = []
        self.i = 0

    def step(self, y, loss_fn, batch):
        a = (self.i * batch) % (self.x.shape[0] - batch)
        self.i += 1
        xb, yb = self.x[a:a + batch], y[a:a + batch]
        if self.order == "late":
            loss = loss_fn(self.model(xb), yb)
            self.opt.zero_grad(set_to_none=False)
        else:
            self.opt.zero_grad(set_to_none=self.order == "none")
            loss = loss_fn(self.model(xb), yb)
        loss.backward()
        self.opt.step()


def main():
    rounds, seconds = int(sys.argv[1]), float(sys.argv[2])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    batch = 64
    x = torch.rand(4096, 1, 28, 28)
    y = torch.randint(0, 10, (4096,))
    loss_fn = torch.nn.CrossEntropyLoss()
    configs = [Config(fmt, True, order, x) for fmt in ("contiguous", "channels_last")
               for order in ("zero", "none", "late")]
    configs += [Config(fmt, False, "zero", x) for fmt in ("contiguous", "channels_last")]
    for c in configs:  # warm-up: oneDNN's kernels are generated at the first calls
        torch.backends.mkldnn.enabled = c.mkldnn
        for _ in range(3):
            c.step(y, loss_fn, batch)
    for _ in range(rounds):
        for c in configs:
            torch.backends.mkldnn.enabled = c.mkldnn
            n, start = 0, time.thread_time()
            while time.thread_time() - start < seconds:
                c.step(y, loss_fn, batch)
                n += 1
            c.rates.append(n / (time.thread_time() - start))
    for c in configs:
        print(c.name, " ".join(f"{r:.3f}" for r in c.rates), flush=True)


if __name__ == "__main__":
    main()
