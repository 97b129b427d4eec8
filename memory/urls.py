from django.urls import path

from . import views

app_name = "memory"

urlpatterns = [
    path("", views.thread_list, name="thread_list"),
]
