"""An object held in a gripper: it moves with the hand's body, so the checker poses it with every state."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HeldObject:
    """A free body carried by a gripper: its pose follows ``attach_body`` at a fixed offset.

    ``T_attach_obj`` is the object's pose in the attaching body's frame (4×4), measured
    at the grasp. The checker moves the object with the arm, so the object is checked
    against everything but ``allowed_pairs`` (its fingers).
    """

    body: str
    attach_body: str
    T_attach_obj: np.ndarray
    body_id: int = -1
    attach_id: int = -1
    qpos_adr: int = -1

    def bind(self, model) -> HeldObject:
        import mujoco

        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, self.body)
        a = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, self.attach_body)
        if b < 0 or a < 0 or model.body_jntnum[b] != 1 or \
                model.jnt_type[model.body_jntadr[b]] != mujoco.mjtJoint.mjJNT_FREE:
            raise ValueError(f"held object {self.body!r} must be a free body and {self.attach_body!r} a body")
        return HeldObject(self.body, self.attach_body, np.asarray(self.T_attach_obj, float), b, a,
                          int(model.jnt_qposadr[model.body_jntadr[b]]))

    def place(self, model, data) -> None:
        import mujoco

        T = np.eye(4)
        T[:3, :3] = data.xmat[self.attach_id].reshape(3, 3)
        T[:3, 3] = data.xpos[self.attach_id]
        W = T @ self.T_attach_obj
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, W[:3, :3].reshape(-1))
        data.qpos[self.qpos_adr:self.qpos_adr + 3] = W[:3, 3]
        data.qpos[self.qpos_adr + 3:self.qpos_adr + 7] = quat
