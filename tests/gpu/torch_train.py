"""A small data-parallel training run for a Batch AI job with pyTorchSettings on a GPU node: each
rank joins the process group through the service's variables (AZ_BATCHAI_PYTORCH_INIT_METHOD,
AZ_BATCHAI_PYTORCH_BACKEND, AZ_BATCHAI_TASK_INDEX), fits a linear model on the node's GPU and
averages its gradients with the other ranks every step. Prints the device, the loss before and
after, and a checksum of the weights that must agree between ranks."""
import os
import sys

import torch
import torch.distributed as dist

world = int(sys.argv[1]) if len(sys.argv) > 1 else 1
rank = int(os.environ["AZ_BATCHAI_TASK_INDEX"])
dist.init_process_group(backend=os.environ.get("AZ_BATCHAI_PYTORCH_BACKEND", "gloo"),
                        init_method=os.environ["AZ_BATCHAI_PYTORCH_INIT_METHOD"], rank=rank, world_size=world)
device = torch.device("cuda:0")
print("rank", rank, "of", world, "on", torch.cuda.get_device_name(device),
      "visible", os.environ.get("CUDA_VISIBLE_DEVICES"), flush=True)

torch.manual_seed(0)  # the same start on every rank
truth = torch.randn(64, 1, device=device)
model = torch.nn.Linear(64, 1, bias=False).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
generator = torch.Generator(device=device).manual_seed(100 + rank)  # each rank its own data


def batch():
    x = torch.randn(256, 64, device=device, generator=generator)
    return x, x @ truth


def loss_now():
    x, y = batch()
    with torch.no_grad():
        return torch.nn.functional.mse_loss(model(x), y).item()


before = loss_now()
for step in range(300):
    x, y = batch()
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    for p in model.parameters():  # gradients averaged through the process group (on the CPU: gloo)
        grad = p.grad.detach().cpu()
        dist.all_reduce(grad)
        p.grad.copy_(grad / world)
    optimizer.step()
after = loss_now()
checksum = float(model.weight.detach().double().sum().cpu())
print(f"rank {rank} loss before {before:.4f} after {after:.6f}", flush=True)
print(f"rank {rank} weights checksum {checksum:.6f}", flush=True)
dist.barrier()
dist.destroy_process_group()
