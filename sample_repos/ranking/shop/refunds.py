def take_back(order):
    order.close()
