resource "azurerm_storage_account" "sa" {
  name = "data"
  public_network_access_enabled = true
}
