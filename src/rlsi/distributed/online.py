class DaskOnlineRLSI: pass
