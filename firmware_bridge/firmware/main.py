# Entry point on the Pico; the code is in app.py. Install with
#   python -m firmware_bridge.install [--port /dev/ttyACM0]
# which copies firmware_bridge/protocol.py (the host's own codec) to :protocol.py and
# these files to the Pico's root. Hold BOOTSEL to stop the loop and get the REPL back.
import app

app.main()
