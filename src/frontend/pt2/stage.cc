// placeholder until the stage lands
