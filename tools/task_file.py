"""What a task file (`<op>_torch.py`) declares, read without importing it: its
module-level constants (EXPECTED_ERROR_TYPE, NON_COMPUTE, CASES, ...)."""
import ast


def task_constants(path):
    """name -> value of every module-level `NAME = <literal>` in `path`."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out
