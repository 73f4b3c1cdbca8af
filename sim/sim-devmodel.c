/* sim-devmodel.c — a device model's lifetime on the engine's side: what
 * sim_device_free needs to release the model it owns. */
#include "sim/sim-devmodel.h"

void
dev_model_free (DevModel *dev)
{
  if (dev == NULL)
    return;
  if (dev->priv != NULL && dev->ops->finalize != NULL)
    dev->ops->finalize (dev);
  if (dev->priv != NULL)
    for (const DevParam *row = dev->ops->params; row->key != NULL; row++)
      if (row->type == DEV_PARAM_STRING)
        g_free (G_STRUCT_MEMBER (char *, dev->priv, row->offset));
  g_free (dev->priv);
  g_free (dev->name);
  g_free (dev->model_name);
  g_free (dev);
}
