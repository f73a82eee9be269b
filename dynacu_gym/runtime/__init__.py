"""The processes of one env's sandbox: display, audio daemon, speaker recorder, browser, server.

They know nothing of the models that perceive through them, the channels or the env.
"""
