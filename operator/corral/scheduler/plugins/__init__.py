"""In-tree plugins: one small module per plugin (``NAME``, the plugin class, ``new(args, handle)``
taking its ``<Plugin>Args`` from :func:`corral.scheduler.config.plugin_args`); each is declared
once in :mod:`corral.scheduler.config.declarations`."""
